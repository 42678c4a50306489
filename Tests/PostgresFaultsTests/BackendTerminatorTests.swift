import CutoverTestSupport
import Foundation
import PostgresClient
import PostgresFaults
import Testing

/// The fault tool that ends sessions as an administrator would.
@Suite("Backend terminator")
struct BackendTerminatorTests {
    @Test(.timeLimit(.minutes(3)))
    func itEndsOnlyTheSessionsItsPatternNames() async throws {
        let database = try await TestPostgres.database("backend_terminator")
        let (ended, victimError, bystanderAnswer) = try await onThread { () -> (Int, PostgresError?, Int) in
            let victim = try database.connect(applicationName: "victim-1")
            let bystander = try database.connect(applicationName: "bystander")
            let admin = try database.connect(applicationName: "terminator")
            let ended = try BackendTerminator.terminate(applicationNameLike: "victim-%", limit: 5, waitingUpTo: .seconds(5), on: admin)
            var victimError: PostgresError?
            do { _ = try victim.query("SELECT 1") } catch let error as PostgresError { victimError = error }
            return (ended, victimError, try bystander.query("SELECT \(7) AS n")[0].decode(Int.self, "n"))
        }
        #expect(ended == 1)
        #expect(victimError?.isConnectionBroken == true, "\(String(describing: victimError))")
        #expect(bystanderAnswer == 7)
    }
}

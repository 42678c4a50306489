import CutoverTestSupport
import PostgresClient
import PostgresFaults
import Testing

/// The proxy that loses a server's reply on purpose, armed for one statement's write.
@Suite("Lossy proxy")
struct LossyProxyTests {
    /// Armed for a statement's text, the proxy lets other sessions' writes that commit through
    /// (here a lone read and an INSERT of another table, each committed at its Sync), and loses
    /// the reply to the write that runs that statement, named or unnamed; the statement has
    /// committed all the same.
    @Test(.timeLimit(.minutes(3)), arguments: [PostgresConfiguration.PreparedStatements.unnamed, .perConnection])
    func armedForAStatementItLosesOnlyTheReplyToThatStatement(statements: PostgresConfiguration.PreparedStatements) async throws {
        let database = try await TestPostgres.database("lossy_proxy_text")
        let (proxy, proxied) = try database.throughLossyProxy()
        defer { proxy.stop() }
        let configuration = {
            var configuration = PostgresConfiguration(connectionString: proxied, connectTimeout: TestPostgres.connectTimeout)
            configuration.preparedStatements = statements
            return configuration
        }()
        let (bystanderAnswers, lost, stored) = try await onThread { () throws -> ([Int], PostgresError?, Int) in
            try database.connect().execute(unsafeSQL: "CREATE TABLE lossy_target (n int); CREATE TABLE lossy_other (n int)")
            let bystander = try PostgresConnection(configuration: configuration)
            let target = try PostgresConnection(configuration: configuration)
            // Once before arming, so that a statement prepared by name is then run by a Bind alone.
            try target.query("INSERT INTO lossy_target VALUES (\(0))")
            proxy.loseNextReplyToCommit(ofStatementContaining: "lossy_target")
            var answers = [try bystander.query("SELECT \(1) AS n")[0].decode(Int.self, "n")]
            try bystander.query("INSERT INTO lossy_other VALUES (\(2))")
            answers.append(try bystander.query("SELECT count(*)::int AS n FROM lossy_other")[0].decode(Int.self, "n"))
            var lost: PostgresError?
            do { try target.query("INSERT INTO lossy_target VALUES (\(1))") } catch let error as PostgresError { lost = error }
            let stored = try database.connect().query("SELECT count(*)::int AS n FROM lossy_target")[0].decode(Int.self, "n")
            return (answers, lost, stored)
        }
        #expect(bystanderAnswers == [1, 1])
        #expect(lost != nil, "the target's reply reached it")
        #expect(proxy.lostReplyCount == 1)
        #expect(stored == 2, "the lost reply's statement committed")
    }
}

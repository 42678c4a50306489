import Cutover
import CutoverPostgres
import CutoverTestSupport
import EphemeralPostgres
import Foundation
import PostgresClient
import PostgresFaults
import Testing

/// Secrets never printed or stored; input never spliced into SQL; libpq's parameters passed on.
@Suite("Security", .timeLimit(.minutes(3)))
struct SecurityTests {
    static let secret = "Pw-Secret-8372"

    /// Every command that connects, with the arguments that make it run.
    static let commands: [[String]] = [
        ["init"], ["status"], ["check"], ["expand"], ["switch", "modern", "--force-readers"], ["backfill"],
        ["contract", "--yes", "--window", "0s"], ["rollback", "switch"], ["history"], ["readers"], ["observe"], ["compare"],
        ["ledger", "prune"], ["init", "--dry-run"], ["expand", "--dry-run"],
    ]

    @Test("a password in a failing connection is never printed", arguments: ["uri", "keyword", "environment", "wrong"])
    func failingConnections(form: String) async throws {
        let refusing = try LoopbackSocket.refusing()
        let server = try await TestPostgres.shared()
        var url: String
        var environment: [String: String] = [:]
        switch form {
        case "uri": url = "postgresql://app:\(Self.secret)@127.0.0.1:\(refusing.port)/app"
        case "keyword": url = "host=127.0.0.1 port=\(refusing.port) user=app password='\(Self.secret)' dbname=app"
        case "environment":
            url = "postgresql://app@127.0.0.1:\(refusing.port)/app"
            environment["PGPASSWORD"] = Self.secret
        default:
            var components = try #require(URLComponents(string: server.adminConnectionString))
            guard components.password != nil else { return }   // a server without passwords: nothing to try
            components.password = Self.secret
            url = try #require(components.string)
        }
        let target = url
        let env = environment
        for arguments in Self.commands {
            let run = try await onThread { try PhaseBinary.run(arguments, databaseURL: target, environment: env) }
            // A wrong password is a refusal to let in (77), the others are unreachable (69).
            #expect(run.status == (form == "wrong" ? 77 : 69), "\(arguments): \(run.status) \(run.diagnostics)")
            #expect(!run.output.contains(Self.secret), "\(arguments) printed the password on stdout")
            #expect(!run.diagnostics.contains(Self.secret), "\(arguments) printed the password on stderr: \(run.diagnostics)")
        }
        withExtendedLifetime(refusing) {}
    }

    @Test func aPasswordInAWorkingConnectionIsNeitherPrintedNorStored() async throws {
        let db = try await WorkflowDatabase.make("security_stored", rows: 20)
        guard let password = URLComponents(string: db.url)?.password else { return }
        var outputs: [String] = []
        for arguments in [["init"], ["expand"], ["switch", "modern", "--force-readers"], ["status"], ["backfill"], ["observe"],
                          ["compare"], ["history"], ["switch", "modern"], ["rollback", "switch"], ["ledger", "prune"]] {
            let run = try await db.phase(arguments)
            outputs.append(run.output + run.diagnostics)
        }
        #expect(outputs.allSatisfy { !$0.contains(password) })
        let stored = try await db.sql { connection in
            try connection.query("""
                SELECT (SELECT count(*) FROM cutover.phase_history h WHERE h::text LIKE '%' || \(password) || '%')
                     + (SELECT count(*) FROM cutover.outcome_log o WHERE o::text LIKE '%' || \(password) || '%')
                     + (SELECT count(*) FROM cutover.migration_state m WHERE m::text LIKE '%' || \(password) || '%') AS n
                """)[0].decode(Int.self, "n")
        }
        #expect(stored == 0)
    }

    @Test func hostileIdentitiesAndContentAreDataNotSQL() async throws {
        let db = try await WorkflowDatabase.make("security_injection", rows: 5)
        #expect(try await db.phase("init").status == 0)
        #expect(try await db.phase("expand").status == 0)
        let pool = PostgresPool(configuration: db.database.configuration(), maximumConnections: 2)
        let store = try await PostgresDraftStore(pool: pool, outcomeFlushInterval: nil)
        let hostile = ["'; DROP TABLE drafts; --", "$1) OR (1=1", "\") ; DELETE FROM cutover.operation_ledger; --", "x'||pg_sleep(5)||'"]
        for (index, text) in hostile.enumerated() {
            let save = SaveDraft(operationScope: text, operationID: text, draftID: "evil-\(index)-" + text, expectedRevision: 0,
                                 content: DraftContent(title: text, body: text, tags: [String(text.prefix(60))]))
            let first = try await ModernDraftAdapter(storage: store).saveReportingOutcome(save)
            let again = try await LegacyDraftAdapter(storage: store).saveReportingOutcome(save)
            #expect(first.outcome == .committed)
            #expect(again.outcome == .replayed)
            #expect(try await store.read(id: save.draftID)?.content == save.content)
        }
        #expect(try await db.value(Int.self, "SELECT count(*) FROM drafts") == 5 + hostile.count)
        #expect(try await db.value(Int.self, "SELECT count(*) FROM cutover.operation_ledger") == hostile.count)
        await pool.shutdown()

        // A plan whose table name is hostile: it is only ever a bound value or a quoted name.
        let folder = try PlanFolder.copyOfDrafts("hostile-plan")
        defer { folder.remove() }
        try folder.editManifest { manifest in
            manifest.replacing("\"table\": \"drafts\"", with: #""table": "drafts'); DROP TABLE drafts; --""#)
                .replacing("\"name\": \"drafts\"", with: #""name": "x'); DELETE FROM cutover.migration_state; --""#)
        }
        for arguments in [["--plan", folder.path, "init"], ["--plan", folder.path, "status"], ["--plan", folder.path, "check", "contract"]] {
            let run = try await db.phase(arguments)
            #expect(run.status == 0 || run.status == 3, "\(arguments): \(run.diagnostics)")
        }
        #expect(try await db.value(Int.self, "SELECT count(*) FROM drafts") == 5 + hostile.count)
        #expect(try await db.value(Int.self, "SELECT count(*) FROM cutover.migration_state") == 2)
    }

    @Test func sslmodeReachesLibpq() async throws {
        let server = try await TestPostgres.shared()
        guard server.cluster != nil, var components = URLComponents(string: server.adminConnectionString) else { return }
        // The throw-away cluster has no TLS: requiring it must fail, which only libpq can decide.
        components.queryItems = [URLQueryItem(name: "sslmode", value: "require")]
        let url = try #require(components.string)
        let run = try await onThread { try PhaseBinary.run(["status"], databaseURL: url) }
        #expect(run.status == 69)
        #expect(run.diagnostics.contains("server does not support SSL"))
    }
}

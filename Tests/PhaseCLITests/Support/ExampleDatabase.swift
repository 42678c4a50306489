import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

/// A database of its own holding one example's starting table, seeded, on which the tests run
/// `phase --plan examples/<example>` and the example's writers.
struct ExampleDatabase: Sendable {
    let workload: ExampleWorkload
    let database: TestDatabase

    /// Creates the database (or takes `given`, which another plan's table may share), runs the
    /// example's `schema.sql` twice (it must be idempotent) and seeds it.
    static func make(_ workload: ExampleWorkload, in given: TestDatabase? = nil) async throws -> ExampleDatabase {
        let database = if let given { given } else { try await TestPostgres.database("example_" + workload.folder) }
        let schema = try String(contentsOfFile: workload.path + "/schema.sql", encoding: .utf8)
        try await onThread {
            let connection = try database.connect()
            try connection.execute(unsafeSQL: schema)
            try connection.execute(unsafeSQL: schema)
            try connection.execute(unsafeSQL: workload.setup)
        }
        return ExampleDatabase(workload: workload, database: database)
    }

    /// Runs `phase --plan examples/<example> <arguments>` and expects `status`; returns what it printed.
    @discardableResult
    func phase(_ arguments: String..., status: Int32 = 0) async throws -> PhaseBinary.Run {
        let url = database.connectionString
        let plan = workload.path
        let run = try await onThread { try PhaseBinary.run(["--plan", plan] + arguments, databaseURL: url) }
        #expect(run.status == status, "\(workload.folder): phase \(arguments.joined(separator: " ")) exited \(run.status):\n\(run.output)\(run.diagnostics)")
        return run
    }

    /// The old application: pgbench under `legacy-<example>`, which contract's check looks for.
    func startLegacyWriter() throws -> PgbenchWriter {
        try PgbenchWriter.start("legacy-\(workload.folder)", script: workload.legacyScript, url: database.connectionString,
                                variables: ["rows": String(ExampleWorkload.rows)])
    }

    /// The new application; it updates seeds only when `updatingSeeds`.
    func startModernWriter(updatingSeeds: Bool) throws -> PgbenchWriter {
        try PgbenchWriter.start("modern-\(workload.folder)", script: workload.modernScript, url: database.connectionString,
                                variables: ["rows": String(ExampleWorkload.rows), "seeds": updatingSeeds ? "1" : "0"])
    }

    /// Runs `sql` on a connection of its own.
    func execute(_ sql: String) async throws {
        let database = database
        try await onThread { _ = try database.connect(applicationName: "example-observer").execute(unsafeSQL: sql) }
    }

    /// The integers of the first row of `sql`.
    func integers(_ sql: String) async throws -> [Int64] {
        let database = database
        return try await onThread {
            let rows = try database.connect(applicationName: "example-observer").query(PostgresQuery(unsafeSQL: sql))
            return try rows.columns.indices.map { try rows[0].decode(Int64.self, at: $0) }
        }
    }

    /// The one integer `sql` returns.
    func integer(_ sql: String) async throws -> Int64 {
        try await integers(sql)[0]
    }

    /// The first column of every row of `sql`.
    func lines(_ sql: String) async throws -> [String] {
        let database = database
        return try await onThread {
            try database.connect(applicationName: "example-observer").query(PostgresQuery(unsafeSQL: sql)).map { try $0.decode(String.self, at: 0) }
        }
    }

    /// Waits until `writer`, drawing keys from `sequence`, has inserted more rows: the event that
    /// shows it wrote after the step just run. A writer whose client aborted fails at once.
    func expectWrites(by writer: PgbenchWriter, from sequence: String, _ context: String) async throws {
        let start = try await integer("SELECT last_value FROM \(sequence)")
        var aborted: [String] = []
        let wrote = try await eventually(within: .seconds(60)) {
            aborted = try writer.abortedClients()
            guard aborted.isEmpty else { return true }
            return try await integer("SELECT last_value FROM \(sequence)") >= start + 5
        }
        #expect(wrote && aborted.isEmpty, "\(writer.name) \(context): \(aborted.isEmpty ? "\(sequence) stayed at \(start)" : aborted.joined(separator: " | "))")
    }

    /// Every row's two representations agree (rows not converted yet aside, unless
    /// `allConverted`), read in one snapshot while the writers run.
    func expectAgreement(_ context: String, allConverted: Bool = false) async throws {
        let disagreeing = try await integer(workload.disagreeing)
        #expect(disagreeing == 0, "\(workload.folder) \(context): \(disagreeing) rows whose representations disagree")
        if allConverted {
            let unconverted = try await integer(workload.unconvertedCount)
            #expect(unconverted == 0, "\(workload.folder) \(context): \(unconverted) rows not converted")
        }
    }

    /// Every row the old writer inserted is there (once it has stopped).
    func expectLegacyRowsKept(_ context: String) async throws {
        let missing = try await integer(workload.legacyRowsMissing)
        #expect(missing == 0, "\(workload.folder) \(context): \(missing) rows of the old writer missing")
    }
}

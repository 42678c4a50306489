import CutoverTestSupport
import Foundation
import PostgresClient
import Testing

@Suite("Queries and rows")
struct QueryTests {
    static let database = Task { try await TestPostgres.database("queries") }

    private func withConnection<T: Sendable>(preparing statements: PostgresConfiguration.PreparedStatements = .unnamed,
                                             _ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        let database = try await Self.database.value
        var configuration = database.configuration()
        configuration.preparedStatements = statements
        return try await onThread { [configuration] in try body(try PostgresConnection(configuration: configuration)) }
    }

    @Test func aDuplicateKeySurfacesSQLState23505WithTheConstraint() async throws {
        let failure = try await withConnection { connection -> PostgresError? in
            try connection.execute(unsafeSQL: "CREATE TABLE dup_items (id text CONSTRAINT dup_items_pkey PRIMARY KEY)")
            try connection.query("INSERT INTO dup_items VALUES (\("a"))")
            do { try connection.query("INSERT INTO dup_items VALUES (\("a"))"); return nil } catch let error as PostgresError { return error }
        }
        let error = try #require(failure)
        #expect(error.code == .server)
        #expect(error.sqlState == .uniqueViolation)
        #expect(error.sqlState?.errorClass == .integrityConstraintViolation)
        #expect(error.constraint == "dup_items_pkey")
        #expect(error.table == "dup_items")
        #expect(error.schema == "public")
        #expect(error.severity == "ERROR")
        #expect(error.detail?.contains("already exists") == true)
        #expect(error.description == "duplicate key value violates unique constraint \"dup_items_pkey\" (SQLSTATE 23505)")
    }

    @Test func errorDescriptionsNeverCarryParameterValues() async throws {
        let failure = try await withConnection { connection -> PostgresError? in
            do { try connection.query("SELECT \("top-secret-value")::int"); return nil } catch let error as PostgresError { return error }
        }
        let error = try #require(failure)
        #expect(error.sqlState == .invalidTextRepresentation)
        #expect(!error.description.contains("top-secret-value"))
        #expect(error.description == "invalid input syntax for type integer: \"[value]\" (SQLSTATE 22P02)")
        #expect(error.query == "SELECT $1::int")
    }

    @Test func aNULInAParameterIsRefusedBeforeAnythingIsSent() async throws {
        let (failure, stateAfter, committed) = try await withConnection { connection -> (PostgresError?, PostgresConnection.TransactionState, Int) in
            try connection.execute(unsafeSQL: "CREATE TABLE nul_items (title text)")
            try connection.execute(unsafeSQL: "BEGIN")
            var failure: PostgresError?
            do { try connection.query("INSERT INTO nul_items VALUES (\("a\u{0}b"))") } catch let error as PostgresError { failure = error }
            // Had anything reached the server, the error would have aborted the transaction.
            let state = connection.transactionState
            try connection.query("INSERT INTO nul_items VALUES (\("fine"))")
            try connection.execute(unsafeSQL: "COMMIT")
            let count = try connection.query("SELECT count(*) AS n FROM nul_items")[0].decode(Int.self, "n")
            return (failure, state, count)
        }
        let error = try #require(failure)
        #expect(error.code == .invalidArgument)
        #expect(error.sqlState == nil)
        #expect(error.description == "parameter $1 contains a NUL character, which PostgreSQL text cannot hold; nothing was sent")
        #expect(stateAfter == .inTransaction)
        #expect(committed == 1)
    }

    @Test func binaryByteaAndUTF8TextBindsReachTheServerIntactBesideTextAndNull() async throws {
        let everyByte = (0...255).map { UInt8($0) }
        // Larger than the stack buffer the parameters are gathered in, so it takes the heap.
        let large = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let document = PostgresBind(utf8Text: Array("{\"title\": \"Grüße 👋\", \"n\": 2}".utf8), type: .jsonb)
        // The same bytes in hex text form, as the reference the binary form must match.
        let largeAsText = PostgresBind(text: PostgresBind(bytea: large).text, type: .bytea)
        let (row, pipelined) = try await withConnection { connection -> ([UInt8], [UInt8]) in
            let query: PostgresQuery = """
                SELECT \(everyByte) AS every, \("after") AS text, \(String?.none) AS nothing,
                       \(document) ->> 'title' AS title, \(large) AS large, sha256(\(large)) AS digest,
                       sha256(\(largeAsText)) AS expected
                """
            let row = try connection.query(query)[0]
            #expect(try row.decode(String.self, "text") == "after")
            #expect(try row.decode(String?.self, "nothing") == nil)
            #expect(try row.decode(String.self, "title") == "Grüße 👋")
            #expect(try row.decode([UInt8].self, "large") == large)
            #expect(try row.decode([UInt8].self, "digest") == (try row.decode([UInt8].self, "expected")))
            let pipelined = try connection.pipelinedTransaction("SELECT \(everyByte) AS every")[0]
            return (try row.decode([UInt8].self, "every"), try pipelined.decode([UInt8].self, "every"))
        }
        #expect(row == everyByte)
        #expect(pipelined == everyByte)
    }

    @Test func aNULInUTF8TextIsRefusedBeforeAnythingIsSent() async throws {
        let failure = try await withConnection { connection -> PostgresError? in
            let bind = PostgresBind(utf8Text: [0x61, 0, 0x62], type: .text)
            do { try connection.query("SELECT \(bind) AS t"); return nil } catch let error as PostgresError { return error }
        }
        let error = try #require(failure)
        #expect(error.code == .invalidArgument)
        #expect(error.description == "parameter $1 contains a NUL character, which PostgreSQL text cannot hold; nothing was sent")
    }

    @Test func moreParametersThanTheProtocolCarriesAreRefusedBeforeAnythingIsSent() async throws {
        let binds = Array(repeating: 1.postgresBind, count: 65_536)
        let failures = try await withConnection { connection -> ([PostgresError?], Int) in
            var failures: [PostgresError?] = []
            for run in [{ try connection.query(PostgresQuery(unsafeSQL: "SELECT 1", binds: binds)) },
                        { try connection.pipelinedTransaction(PostgresQuery(unsafeSQL: "SELECT 1", binds: binds)) }] {
                do { _ = try run(); failures.append(nil) } catch let error as PostgresError { failures.append(error) }
            }
            return (failures, try connection.query("SELECT \(2) AS n")[0].decode(Int.self, "n"))
        }
        for failure in failures.0 {
            let error = try #require(failure)
            #expect(error.code == .invalidArgument)
            #expect(error.description == "the statement binds 65536 parameters, more than the 65535 PostgreSQL accepts; nothing was sent")
        }
        #expect(failures.1 == 2)
    }

    @Test func typedValuesRoundTrip() async throws {
        struct Document: Codable, Equatable, Sendable { var title: String; var tags: [String] }
        let document = Document(title: "Grüße 👋", tags: ["a", "b"])
        let date = Date(timeIntervalSince1970: 1_796_040_900.123456)
        let bytes: [UInt8] = [0, 1, 2, 0xfe, 0xff]
        let values = try await withConnection { connection -> (String, Int, Int64, Int32, Bool, Double, Date, [UInt8], Data, Document, String?, Int?) in
            let row = try connection.query("""
                SELECT \("it's $1 'quoted'; DROP TABLE x --") AS text, \(Int.max) AS big, \(Int64.min) AS small,
                       \(Int32(-7)) AS int4, \(true) AS flag, \(0.1) AS ratio, \(date) AS at,
                       \(bytes) AS bytes, \(Data([9, 8])) AS data, \(try PostgresJSON(document)) AS doc,
                       NULL::text AS nothing, \(Int?.none) AS no_int
                """)[0]
            return (try row.decode(String.self, "text"), try row.decode(Int.self, "big"), try row.decode(Int64.self, "small"),
                    try row.decode(Int32.self, "int4"), try row.decode(Bool.self, "flag"), try row.decode(Double.self, "ratio"),
                    try row.decode(Date.self, "at"), try row.decode([UInt8].self, "bytes"), try row.decode(Data.self, "data"),
                    try row.decodeJSON(Document.self, "doc"), try row.decode(String?.self, "nothing"),
                    try row.decode(Int?.self, "no_int"))
        }
        #expect(values.0 == "it's $1 'quoted'; DROP TABLE x --")
        #expect(values.1 == Int.max)
        #expect(values.2 == Int64.min)
        #expect(values.3 == -7)
        #expect(values.4 == true)
        #expect(values.5 == 0.1)
        #expect(abs(values.6.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.000_001)
        #expect(values.7 == bytes)
        #expect(values.8 == Data([9, 8]))
        #expect(values.9 == document)
        #expect(values.10 == nil)
        #expect(values.11 == nil)
    }

    @Test func anAbsentValueIsNULLOfTheTypeItsValuesAreSentAs() async throws {
        let types = try await withConnection { connection -> [String] in
            let row = try connection.query("""
                SELECT pg_typeof(\(Int64?.none))::text AS int8, pg_typeof(\(Int32?.none))::text AS int4,
                       pg_typeof(\(Bool?.none))::text AS bool, pg_typeof(\(Date?.none))::text AS timestamptz,
                       pg_typeof(\(Data?.none))::text AS bytea, pg_typeof(\(PostgresJSON?.none))::text AS jsonb,
                       pg_typeof(coalesce(\(String?.none), 0::int2))::text AS inferred
                """)[0]
            return try ["int8", "int4", "bool", "timestamptz", "bytea", "jsonb", "inferred"].map { try row.decode(String.self, $0) }
        }
        // Text leaves its type to the server, as its values do: here the other argument's.
        #expect(types == ["bigint", "integer", "boolean", "timestamp with time zone", "bytea", "jsonb", "smallint"])
    }

    @Test func timestampsComeBackInUTCWhateverTheSessionTimeZone() async throws {
        let date = try await withConnection { connection -> Date in
            try connection.execute(unsafeSQL: "SET TimeZone = 'America/St_Johns'")
            return try connection.query("SELECT timestamptz '2026-11-30 12:15:00+00' AS at")[0].decode(Date.self, "at")
        }
        #expect(date.timeIntervalSince1970 == 1_796_040_900)
    }

    @Test func aDecodeErrorNamesTheColumnItsSQLTypeAndTheSwiftType() async throws {
        let failures = try await withConnection { connection -> [String] in
            let row = try connection.query("SELECT 'abc'::text AS title, NULL::bigint AS revision, '{\"a\":1}'::jsonb AS doc")[0]
            var messages: [String] = []
            do { _ = try row.decode(Int.self, "title") } catch { messages.append("\(error)") }
            do { _ = try row.decode(Int64.self, "revision") } catch { messages.append("\(error)") }
            do { _ = try row.decode(String.self, "missing") } catch { messages.append("\(error)") }
            do { _ = try row.decodeJSON([String].self, "doc") } catch { messages.append("\(error)") }
            return messages
        }
        #expect(failures == [
            "cannot decode column \"title\" of SQL type text as Swift Int: the text is not a valid Int",
            "cannot decode column \"revision\" of SQL type bigint as Swift Int64: the value is NULL; decode an optional to accept NULL",
            "cannot decode column \"missing\" of SQL type unspecified as Swift String: no such column; the result has title, revision, doc",
            "cannot decode column \"doc\" of SQL type jsonb as Swift Array<String>: the JSON does not match: expected Array<Any> at the top level",
        ])
    }

    @Test func identifiersAreQuotedByLibpq() async throws {
        let (quoted, count) = try await withConnection { connection -> (String, Int) in
            let name = "odd \"table\"; name"
            try connection.query("CREATE TABLE \(identifier: name) (id int)")
            try connection.query("INSERT INTO \(identifier: name) VALUES (\(1)), (\(2))")
            let count = try connection.query("SELECT count(*) AS n FROM \(identifier: name)")[0].decode(Int.self, "n")
            return (try connection.quoteIdentifier(name), count)
        }
        #expect(quoted == "\"odd \"\"table\"\"; name\"")
        #expect(count == 2)
    }

    @Test func byDefaultStatementsAreUnnamedAndNothingStaysPrepared() async throws {
        let (prepared, affected) = try await withConnection { connection -> (Int, [Int?]) in
            try connection.execute(unsafeSQL: "CREATE TABLE unnamed_items (id int)")
            var affected: [Int?] = []
            for value in 0..<3 { affected.append(try connection.query("INSERT INTO unnamed_items VALUES (\(value))").affectedRows) }
            _ = try connection.pipelinedTransaction("INSERT INTO unnamed_items VALUES (\(3))")
            return (try connection.query("SELECT count(*) AS n FROM pg_prepared_statements")[0].decode(Int.self, "n"), affected)
        }
        #expect(prepared == 0)
        #expect(affected == [1, 1, 1])
    }

    @Test func statementsPreparedPerConnectionArePreparedOnceAndReused() async throws {
        let (prepared, affected) = try await withConnection(preparing: .perConnection) { connection -> (Int, [Int?]) in
            try connection.execute(unsafeSQL: "CREATE TABLE reuse_items (id int)")
            var affected: [Int?] = []
            for value in 0..<5 { affected.append(try connection.query("INSERT INTO reuse_items VALUES (\(value))").affectedRows) }
            let prepared = try connection.query("SELECT count(*) AS n FROM pg_prepared_statements WHERE statement LIKE \("INSERT INTO reuse_items%")")[0]
                .decode(Int.self, "n")
            return (prepared, affected)
        }
        #expect(prepared == 1)
        #expect(affected == [1, 1, 1, 1, 1])
    }

    @Test func aStatementDiscardedByTheServerIsPreparedAgain() async throws {
        let value = try await withConnection(preparing: .perConnection) { connection -> Int in
            _ = try connection.query("SELECT \(1) AS n")
            try connection.execute(unsafeSQL: "DEALLOCATE ALL")
            return try connection.query("SELECT \(2) AS n")[0].decode(Int.self, "n")
        }
        #expect(value == 2)
    }

    @Test func aChangedResultTypeAfterDDLIsPreparedAgain() async throws {
        let title = try await withConnection(preparing: .perConnection) { connection -> String in
            try connection.execute(unsafeSQL: "CREATE TABLE shape_items (id int, title text); INSERT INTO shape_items VALUES (1, 'x')")
            _ = try connection.query("SELECT * FROM shape_items WHERE id = \(1)")
            try connection.execute(unsafeSQL: "ALTER TABLE shape_items ADD COLUMN body text DEFAULT 'b'")
            return try connection.query("SELECT * FROM shape_items WHERE id = \(1)")[0].decode(String.self, "body")
        }
        #expect(title == "b")
    }

    @Test func executeRunsSeveralStatementsAndReturnsTheLast() async throws {
        let tag = try await withConnection { connection -> String in
            try connection.execute(unsafeSQL: "CREATE TABLE multi_items (id int); INSERT INTO multi_items VALUES (1), (2); UPDATE multi_items SET id = id + 1").commandTag
        }
        #expect(tag == "UPDATE 2")
    }
}

import Cutover
import PostgresClient
import Synchronization

/// The part of a ``PostgresRecordStore``'s save that does not depend on the entity: from a
/// checked, encoded request to the save function's answer.
///
/// The store's generic surface is inlinable, so that the application's module compiles it
/// for its own entity; without that, every save paid for the entity's type being looked up at
/// run time. What it calls is this one class, compiled once here: it chooses the function
/// (the writer path's own, else the plan's `save_record_<plan>`, else `cutover.save_record`),
/// sends the call and a Sync in one pipeline (the server commits at the Sync), and maps what the server raised to the
/// contract's failures.
@usableFromInline
final class RecordSaveSender: Sendable {
    /// A save that applied: committed now or replayed, at the revision it committed.
    @usableFromInline
    struct Answer: Sendable {
        @usableFromInline let revision: Int64
        @usableFromInline let isReplay: Bool
    }

    let pool: PostgresPool
    let plan: String
    let keyColumns: [RecordKeyColumn]
    private let lockTimeoutBind: PostgresBind
    /// The plan's own save functions (`cutover.make_record_save`), read from the plan's
    /// registration when the store is made and again, at most every ``registrationRefresh``,
    /// while a path has none (a step such as expand makes them); and when they were read.
    private let functions: Mutex<(functions: RecordSaveFunctions, readAt: ContinuousClock.Instant)>
    private let logger: CutoverLogger
    /// How often a path without a function of its own looks for one again.
    static var registrationRefresh: Duration { .seconds(10) }

    /// A sender for plan `plan`, whose entity is keyed by `keyColumns`, after reading the
    /// plan's registration and checking the control schema through `pool`.
    init(pool: PostgresPool, plan: String, keyColumns: [RecordKeyColumn], lockTimeout: Duration, logger: CutoverLogger) async throws {
        self.pool = pool
        self.plan = plan
        self.keyColumns = keyColumns
        self.logger = logger
        lockTimeoutBind = SaveFunctionFailure.lockTimeoutMilliseconds(lockTimeout)
        let functions = try await pool.withConnection { connection in
            try ControlSchema.verify(on: connection, for: .application)
            return try RecordSaveFunctions.read(plan: plan, keyColumns: keyColumns.map(\.name), on: connection, logger: logger)
        }
        self.functions = Mutex((functions, ContinuousClock.now))
    }

    /// Sends one save whose request has been validated; `request` is its canonical encoding.
    ///
    /// - Throws: ``SaveFailure`` for a save that did not apply (the claim rolled back with it)
    ///   or whose outcome is unknown, ``RecordStoreError`` for the store's refusals, or the
    ///   connection's error.
    @usableFromInline
    func send(scope: String, operationID: String, key: RecordKey, expected: Int64, write: [String: RecordColumnValue],
              request: [UInt8], path: SavePath) async throws -> Answer {
        if let typed = await pathFunction(path), let binds = typed.binds(
            scope: scope, operationID: operationID, key: key, expected: expected, write: write, request: request,
            lockTimeout: lockTimeoutBind) {
            do {
                return try Self.answer(try await pool.pipelinedTransaction(PostgresQuery(unsafeSQL: typed.sql, binds: binds))[0])
            } catch let error as PostgresError where RecordSaveFunctions.isOutOfDate(error) {
                // The call never ran as made (nothing was claimed): forget the function, and
                // send the same save as JSON, which finds the table as it is now.
                functions.withLock { $0.functions[path] = nil }
            } catch let error as PostgresError {
                throw Self.failure(for: error, expected: expected)
            }
        }
        let binds = [
            scope.postgresBind, operationID.postgresBind,
            PostgresBind(utf8Text: RecordJSON.key(key, columns: keyColumns), type: .jsonb),
            expected.postgresBind, path.rawValue.postgresBind,
            PostgresBind(utf8Text: RecordJSON.columns(write), type: .jsonb),
            PostgresBind(bytea: request), lockTimeoutBind,
        ]
        do {
            return try Self.answer(try await sendAsJSON(binds))
        } catch let error as PostgresError {
            throw Self.failure(for: error, expected: expected)
        }
    }

    /// The save's answer from the function's row.
    private static func answer(_ row: PostgresRow) throws -> Answer {
        let outcome = try row.decode(String.self, "outcome")
        switch outcome {
        case "committed": return Answer(revision: try row.decode(Int64.self, "revision"), isReplay: false)
        case "replayed": return Answer(revision: try row.decode(Int64.self, "revision"), isReplay: true)
        case "operationConflict": throw SaveFailure.operationConflict
        default: throw PostgresError(code: .unexpectedResponse, message: "cutover.save_record returned outcome \(outcome)")
        }
    }

    /// The function of `path`; while it has none, the registration is read again at most
    /// every ``registrationRefresh``, so that a store made before expand finds the modern path's.
    private func pathFunction(_ path: SavePath) async -> RecordSaveFunctions.PathFunction? {
        let (known, due) = functions.withLock { state -> (RecordSaveFunctions.PathFunction?, Bool) in
            if let known = state.functions[path] { return (known, false) }
            return (nil, ContinuousClock.now - state.readAt >= Self.registrationRefresh)
        }
        if known != nil || !due { return known }
        functions.withLock { $0.readAt = ContinuousClock.now }
        do {
            let read = try await pool.withConnection { connection in
                try RecordSaveFunctions.read(plan: self.plan, keyColumns: self.keyColumns.map(\.name), on: connection, logger: self.logger)
            }
            functions.withLock { $0.functions = read }
            return read[path]
        } catch {
            // The save goes on as JSON; the next look is as far off as after a read.
            logger.log(.notice, "record store: reading the plan's registration failed: \(error)", metadata: ["plan": plan])
            return nil
        }
    }

    /// Sends one save, with ``saveSQL``'s parameters but the plan, to the plan's own save
    /// function, or to `cutover.save_record` when there is none; returns the function's row.
    private func sendAsJSON(_ binds: [PostgresBind]) async throws -> PostgresRow {
        if let own = functions.withLock({ $0.functions.ownSQL }) {
            do {
                return try await pool.pipelinedTransaction(PostgresQuery(unsafeSQL: own, binds: binds))[0]
            } catch let error as PostgresError where error.sqlState == .undefinedFunction || error.sqlState == .insufficientPrivilege {
                // The function is gone (its table was dropped) or not granted: the call never
                // ran, so nothing was claimed, and the same save goes through save_record.
                functions.withLock { $0.functions.ownSQL = nil }
            }
        }
        return try await pool.pipelinedTransaction(PostgresQuery(unsafeSQL: Self.saveSQL, binds: [plan.postgresBind] + binds))[0]
    }

    /// One save; the parameters are plan, scope, operation ID, key, expected revision, path,
    /// columns, canonical request and lock timeout.
    static var saveSQL: String { "SELECT outcome, revision FROM cutover.save_record($1, $2, $3, $4, $5, $6, $7, $8, $9)" }

    /// Maps the save function's raised outcomes and the connection's failures to the contract.
    static func failure(for error: PostgresError, expected: Int64) -> any Error {
        SaveFunctionFailure.failure(for: error, expected: expected) { error in
            switch error.sqlState {
            case .formatNotStored?: RecordStoreError.formatNotStored(error.message)
            case .entityNotUsable?: RecordStoreError.entityNotUsable(error.message)
            case .lockNotAvailable?: RecordStoreError.lockTimeout
            case .callerNotPermitted?: RecordStoreError.notPermitted(error.message)
            default: nil
            }
        }
    }
}

extension SQLState {
    /// CU006: the plan's entity cannot be saved: not registered, or its table or revision column missing.
    static let entityNotUsable = SQLState(rawValue: "CU006")
}

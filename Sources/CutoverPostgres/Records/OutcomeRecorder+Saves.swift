import Cutover
import PostgresClient

extension OutcomeRecorder {
    /// Runs one save on `path` and counts its outcome: the success's, the ``SaveFailure``'s,
    /// or ``errorCode`` for any other error (nothing committed), which is rethrown unchanged.
    func counting<Result>(on path: SavePath, outcome: (Result) -> SaveOutcome,
                          _ save: () async throws -> Result) async throws -> Result {
        do {
            let result = try await save()
            record(outcome(result), on: path)
            return result
        } catch let failure as SaveFailure {
            record(failure.outcome, on: path)
            throw failure
        } catch {
            // Outside the contract's outcomes (a lock timeout, a format the table does not hold,
            // a connection that broke before anything could commit): nothing committed.
            recordError(on: path)
            throw error
        }
    }
}

/// What the save functions' raised SQLSTATEs and a lost COMMIT mean in the contract, for both stores.
enum SaveFunctionFailure {
    /// The lock timeout as the save functions' `p_lock_timeout_ms`.
    static func lockTimeoutMilliseconds(_ lockTimeout: Duration) -> PostgresBind {
        Int32(clamping: Int64((lockTimeout / .milliseconds(1)).rounded(.up))).postgresBind
    }

    /// CU001 to CU003 and an unknown outcome as the contract's failures; `storeError` maps the
    /// store's own refusals first; anything else is the error itself.
    static func failure(for error: PostgresError, expected: Int64, storeError: (PostgresError) -> (any Error)?) -> any Error {
        if let refusal = storeError(error) { return refusal }
        switch error.sqlState {
        case .revisionConflict?:
            guard let current = error.detail.flatMap({ Int64($0) }) else { return error }
            return SaveFailure.conflict(expected: expected, current: current)
        case .draftNotFound?: return SaveFailure.notFound
        case .revisionExhausted?: return SaveFailure.exhausted
        default: break
        }
        if error.code == .outcomeUnknown { return SaveFailure.outcomeUnknown }
        return error
    }
}

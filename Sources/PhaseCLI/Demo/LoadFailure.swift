import Cutover
import CutoverPostgres
import PostgresClient

/// How one attempt of the simulated fleet's load failed, as the verdict counts it.
///
/// A conflict is not a failure: the fleet's instances and the old versions edit the same
/// drafts at once, and a conflict is the conditional write doing its job (the instance re-reads
/// and goes on). Everything else is.
struct LoadFailure: Hashable, Sendable, Comparable, CustomStringConvertible {
    enum Kind: String, Sendable, Comparable {
        /// No answer: the connection broke, the server went away or a lock wait ran out. The
        /// same request is sent again; a fault injector causes these on purpose.
        case lost
        /// An answer the load should never get (a format the table does not hold, a draft not
        /// found, a decoding error, …): a defect, whatever the faults.
        case refused
        /// Given up without an answer after the retries' bound.
        case unanswered

        static func < (lhs: Kind, rhs: Kind) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    var kind: Kind
    /// The outcome code, error case or SQLSTATE that says what failed.
    var code: String

    var description: String { "\(kind.rawValue) \(code)" }

    static func < (lhs: LoadFailure, rhs: LoadFailure) -> Bool { (lhs.kind, lhs.code) < (rhs.kind, rhs.code) }

    /// What `error`, thrown by a read or a save of the load, counts as; nil for a conflict.
    static func of(_ error: any Error) -> LoadFailure? {
        switch error {
        case SaveFailure.conflict:
            return nil
        case SaveFailure.outcomeUnknown:
            return LoadFailure(kind: .lost, code: SaveOutcome.outcomeUnknown.rawValue)
        case let failure as SaveFailure:
            return LoadFailure(kind: .refused, code: failure.outcome.rawValue)
        case DraftStoreError.lockTimeout:
            return LoadFailure(kind: .lost, code: "lockTimeout")
        case DraftStoreError.formatNotStored:
            return LoadFailure(kind: .refused, code: "formatNotStored")
        case let error as PostgresError:
            let errorClass = error.sqlState?.errorClass
            let isLost = error.isConnectionBroken || error.code == .poolTimeout
                || errorClass == .connectionException || errorClass == .operatorIntervention
            return LoadFailure(kind: isLost ? .lost : .refused, code: error.sqlState.map { "SQLSTATE \($0)" } ?? error.code.name)
        default:
            return LoadFailure(kind: .refused, code: String(describing: type(of: error)))
        }
    }
}

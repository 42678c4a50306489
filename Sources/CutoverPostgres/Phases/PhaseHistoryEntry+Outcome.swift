import Cutover
import PostgresClient

extension PhaseHistoryEntry {
    /// How an attempt at a step went, as `cutover.phase_history.outcome` stores it.
    public enum Outcome: String, Sendable, Hashable, CaseIterable, CustomStringConvertible, PostgresDecodable {
        /// Begun and not ended: a runner is at work on it, or died before ending it.
        case running
        /// It did what it was asked; the phase changed with its last transaction.
        case done
        /// Asked for again after it had happened: nothing changed.
        case skipped
        /// It began and stopped on an error.
        case failed
        /// Its checks (or the state) refused it before anything changed.
        case refused
        /// It began and its runner stopped (was stopped, or died) before it ended.
        case interrupted

        /// The stored code, identical to the raw value.
        public var description: String { rawValue }

        /// Whether the attempt began to change something: every outcome but refused and skipped.
        public var beganChanges: Bool {
            switch self {
            case .running, .done, .failed, .interrupted: true
            case .refused, .skipped: false
            }
        }
    }
}

extension PhaseStep.Direction: PostgresDecodable {}

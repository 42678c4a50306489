import PostgresClient

/// Why a step's session was lost in a way that a new session may get past: the connection
/// broke, the server shut down or is starting, or it became a read-only standby (a failover).
///
/// ``init(_:ownSessions:)`` is a pure classification of an error: nil means the error is the
/// step's real answer (a refusal, a failed check, bad SQL, a cancel the operator asked for, a
/// role the server refuses) and must not be retried.
///
/// ```swift
/// if let loss = ConnectionLoss(error) { print("lost: \(loss)") }   // "the server shut down (SQLSTATE 57P01)"
/// ```
public struct ConnectionLoss: Sendable, Equatable, CustomStringConvertible {
    /// What was lost, in a few words.
    public let reason: String

    /// Classifies `error`; nil when it is not a lost connection.
    ///
    /// - Parameter ownSessions: server process IDs of sessions this command opened before; a
    ///   lease held by one of them is this command's own, from a session the server has not
    ///   ended yet, and waiting for it is a lost connection too.
    public init?(_ error: any Error, ownSessions: Set<Int32> = []) {
        switch error {
        case let error as PostgresError:
            guard let reason = Self.reason(for: error) else { return nil }
            self.reason = reason
        case RunnerLockError.held(let holder?, _) where ownSessions.contains(holder.pid):
            self.reason = "the plan's lease is still held by this command's previous session (pid \(holder.pid))"
        default:
            return nil
        }
    }

    private static func reason(for error: PostgresError) -> String? {
        if let state = error.sqlState {
            switch state {
            case .adminShutdown: return "the server shut down (SQLSTATE 57P01)"
            case .crashShutdown: return "the server crashed (SQLSTATE 57P02)"
            case .cannotConnectNow: return "the server is starting or stopping (SQLSTATE 57P03)"
            case .readOnlySQLTransaction: return "the server is read-only, a standby now (SQLSTATE 25006)"
            case let state where state.errorClass == .connectionException: return "the connection failed (SQLSTATE \(state.rawValue))"
            default: break
            }
        }
        switch error.code {
        case .connectionLost: return "the connection broke"
        case .outcomeUnknown: return "the connection broke around COMMIT"
        case .connectionFailed: return "cannot connect to a writable server: \(error.message)"
        default: return nil
        }
    }

    public var description: String { reason }
}

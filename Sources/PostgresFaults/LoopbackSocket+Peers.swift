import EphemeralPostgres

extension LoopbackSocket {
    /// A socket that accepts connections into its backlog but never answers them: a server
    /// that is unreachable at the protocol level, without leaving this machine.
    ///
    /// ```swift
    /// let silent = try LoopbackSocket.silent()
    /// // postgresql://127.0.0.1:\(silent.port)/db connects, then hears nothing.
    /// ```
    package static func silent() throws -> LoopbackSocket { try LoopbackSocket(backlog: 16) }

    /// A port that refuses connections: bound, so nobody else can take it, but not listening.
    package static func refusing() throws -> LoopbackSocket { try LoopbackSocket(backlog: nil) }
}

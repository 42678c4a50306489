/// Somewhere text goes: standard output, standard error, or a buffer in a test.
public protocol TextOutput: Sendable {
    /// Whether a person is probably watching: the stream is a terminal.
    var isTerminal: Bool { get }
    /// Writes `text` as it is; add the newline yourself.
    func write(_ text: String)
}

import Synchronization

/// A ``TextOutput`` that keeps what is written, for tests and for building text in memory.
///
/// ```swift
/// let output = CapturedOutput(isTerminal: true)
/// output.write("hello\n")
/// #expect(output.text == "hello\n")
/// ```
public final class CapturedOutput: TextOutput {
    public let isTerminal: Bool
    private let buffer = Mutex("")

    /// An empty buffer that reports itself as a terminal or not.
    public init(isTerminal: Bool = false) {
        self.isTerminal = isTerminal
    }

    /// Everything written so far.
    public var text: String {
        buffer.withLock { $0 }
    }

    public func write(_ text: String) {
        buffer.withLock { $0 += text }
    }
}

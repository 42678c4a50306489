#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Standard output or standard error of this process.
public struct StandardStream: TextOutput {
    /// Standard output: where results go.
    public static let output = StandardStream(fileDescriptor: STDOUT_FILENO)
    /// Standard error: where progress and diagnostics go.
    public static let error = StandardStream(fileDescriptor: STDERR_FILENO)

    private let fileDescriptor: Int32
    public let isTerminal: Bool

    private init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
        isTerminal = isatty(fileDescriptor) == 1
    }

    public func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { buffer in
                #if canImport(Glibc)
                Glibc.write(fileDescriptor, buffer.baseAddress, buffer.count)
                #else
                Darwin.write(fileDescriptor, buffer.baseAddress, buffer.count)
                #endif
            }
            if written > 0 {
                bytes = bytes.dropFirst(written)
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                // A closed pipe or a full disk: nothing sensible is left to do with the text.
                return
            }
        }
    }
}

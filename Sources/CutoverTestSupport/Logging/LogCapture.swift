import Cutover
import Synchronization

/// Keeps every record a ``CutoverLogger`` made from it hands over, for a test to read, as
/// swift-log's in-memory handler does.
///
/// ```swift
/// let capture = LogCapture()
/// let registration = try await ReaderRegistration(…, logger: capture.logger(label: "web-1"))
/// #expect(try await eventually { capture.records.contains { $0.level == .warning } })
/// ```
public final class LogCapture: Sendable {
    private let kept = Mutex<[CutoverLogger.Record]>([])

    /// An empty capture.
    public init() {}

    /// A logger whose records of `minimumLevel` and above this capture keeps.
    public func logger(label: String, minimumLevel: CutoverLogger.Level = .trace) -> CutoverLogger {
        CutoverLogger(label: label, minimumLevel: minimumLevel) { record in self.kept.withLock { $0.append(record) } }
    }

    /// The records so far, oldest first.
    public var records: [CutoverLogger.Record] { kept.withLock { $0 } }

    /// The records so far of `level`.
    public func records(at level: CutoverLogger.Level) -> [CutoverLogger.Record] {
        records.filter { $0.level == level }
    }
}

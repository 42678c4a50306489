/// Where the library reports what goes wrong, and what changes, in work the caller does not
/// await: background heartbeats, flushes, reads and listening connections.
///
/// It follows swift-log's practice for libraries: the caller gives a logger to what it creates
/// (``disabled``, which drops everything, when it gives none); a message and its metadata are
/// built only when their level is enabled; each record carries a level, the logger's label and
/// metadata. The handler decides where records go: standard error, swift-log, a test's list.
/// It is called on a background task, so it must not block.
///
/// ```swift
/// let logger = CutoverLogger(label: "billing-web") { record in print(record) }
/// logger.log(.warning, "heartbeat failed: \(error)", metadata: ["instanceID": instanceID])
/// let registration = try await ReaderRegistration(pool: pool, plan: "drafts", instanceID: hostName, applicationName: "billing-web",
///                                                 applicationVersion: "4.2.0", formats: [.v1, .v2], logger: logger)
/// ```
public struct CutoverLogger: Sendable {
    /// How much a record matters, least first; the same levels as swift-log's.
    public enum Level: Int, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
        /// Every detail, for following the code.
        case trace
        /// What helps explain a problem.
        case debug
        /// A change worth knowing of: a new writer path, a recovered heartbeat.
        case info
        /// A normal but notable condition: following by polling alone.
        case notice
        /// Something failed and is being retried; what depends on it may be affected meanwhile.
        case warning
        /// Something failed and will not be retried.
        case error
        /// The process cannot go on as asked.
        case critical

        public static func < (left: Level, right: Level) -> Bool { left.rawValue < right.rawValue }

        /// The level's name: `trace`, `debug`, …, `critical`.
        public var description: String {
            switch self {
            case .trace: "trace"
            case .debug: "debug"
            case .info: "info"
            case .notice: "notice"
            case .warning: "warning"
            case .error: "error"
            case .critical: "critical"
            }
        }
    }

    /// Facts about a record as names and values (`instanceID`, `failures`), never payloads or
    /// secrets.
    public typealias Metadata = [String: String]

    /// One thing reported: what the handler receives.
    public struct Record: Sendable, CustomStringConvertible {
        /// The label of the logger it came through.
        public var label: String
        /// How much it matters.
        public var level: Level
        /// What happened, one line.
        public var message: String
        /// The logger's metadata and the record's own, the record's winning where both name a key.
        public var metadata: Metadata

        /// `<level>: <label>: <message>`, then the metadata as ` (key=value, …)` sorted by key.
        public var description: String {
            let facts = metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            return "\(level): \(label): \(message)" + (facts.isEmpty ? "" : " (\(facts.joined(separator: ", ")))")
        }
    }

    /// Names the logger's source in every record: an application, an instance.
    public var label: String
    /// The least level that reaches the handler.
    public var minimumLevel: Level
    /// Metadata added to every record.
    public var metadata: Metadata = [:]
    private let handler: (@Sendable (Record) -> Void)?

    /// A logger whose records of `minimumLevel` and above go to `handler`.
    public init(label: String, minimumLevel: Level = .info, handler: @escaping @Sendable (Record) -> Void) {
        self.label = label
        self.minimumLevel = minimumLevel
        self.handler = handler
    }

    /// The logger of a caller that gives none: it drops every record without building it.
    public static let disabled = CutoverLogger()

    private init() {
        label = ""
        minimumLevel = .critical
        handler = nil
    }

    /// The value of one key of ``metadata``.
    public subscript(metadataKey key: String) -> String? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Whether a record of `level` would reach the handler.
    public func isEnabled(_ level: Level) -> Bool {
        handler != nil && level >= minimumLevel
    }

    /// Reports `message` at `level`; the message and the metadata are built only when the level
    /// is enabled. The one way to log: the level is a parameter, not a method of its own.
    public func log(_ level: Level, _ message: @autoclosure () -> String,
                    metadata: @autoclosure () -> Metadata = [:]) {
        guard let handler, level >= minimumLevel else { return }
        handler(Record(label: label, level: level, message: message(),
                       metadata: self.metadata.merging(metadata()) { _, own in own }))
    }
}

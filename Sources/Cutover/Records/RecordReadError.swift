/// Why a reader could not read a stored record; names formats and columns, never values.
public enum RecordReadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// One format tried and why it could not read the row.
    public struct Attempt: Sendable, Hashable {
        /// The format tried.
        public let format: SavePath
        /// What its codec found.
        public let problem: RecordDecodingError

        /// An attempt of `format` that found `problem`.
        public init(format: SavePath, problem: RecordDecodingError) {
            self.format = format
            self.problem = problem
        }
    }

    /// The row holds none of the formats this reader reads: for a legacy reader, contract has removed its columns.
    case formatNotStored(SavePath)

    /// Every format this reader reads is stored, and none could read the row.
    case unreadable([Attempt])

    /// One line: what is missing or which format said what.
    public var description: String {
        switch self {
        case .formatNotStored(let path):
            "the \(path) format is not stored in this table (a \(path) reader cannot read it)"
        case .unreadable(let attempts):
            "no format could read the record: " + attempts.map { "\($0.format): \($0.problem)" }.joined(separator: "; ")
        }
    }
}

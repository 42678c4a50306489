/// SQL text with its parameters bound separately, never spliced in.
///
/// Interpolated values become `$1`, `$2`, … and travel as parameters; identifiers are quoted by
/// libpq when the query runs; raw SQL has to be asked for by name.
///
/// ```swift
/// let query: PostgresQuery = "UPDATE \(identifier: table) SET title = \(title) WHERE id = \(id)"
/// // UPDATE "drafts" SET title = $1 WHERE id = $2, with two parameters
/// ```
public struct PostgresQuery: Sendable, Equatable, ExpressibleByStringInterpolation, CustomStringConvertible {
    enum Segment: Sendable, Equatable {
        case sql(String)
        case identifier(String)
    }

    var segments: [Segment]
    /// The parameters, in `$n` order.
    public private(set) var binds: [PostgresBind]

    /// A query from SQL text that already holds its `$n` placeholders, with their parameters.
    ///
    /// The text is sent as it is: never build it from untrusted input.
    public init(unsafeSQL sql: String, binds: [PostgresBind] = []) {
        segments = [.sql(sql)]
        self.binds = binds
    }

    public init(stringLiteral value: String) {
        segments = [.sql(value)]
        binds = []
    }

    public init(stringInterpolation: StringInterpolation) {
        segments = stringInterpolation.segments
        binds = stringInterpolation.binds
    }

    /// The SQL text with identifiers shown double-quoted; parameters are not shown.
    public var description: String {
        (try? render(quotingIdentifiersWith: { "\"" + $0.replacing("\"", with: "\"\"") + "\"" })) ?? ""
    }

    /// The SQL text, with each identifier quoted by `quote`.
    func render(quotingIdentifiersWith quote: (String) throws -> String) throws -> String {
        var sql = ""
        for segment in segments {
            switch segment {
            case .sql(let text): sql += text
            case .identifier(let name): sql += try quote(name)
            }
        }
        return sql
    }

    /// Builds a ``PostgresQuery`` from a string literal with interpolations.
    public struct StringInterpolation: StringInterpolationProtocol {
        var segments: [Segment] = []
        var binds: [PostgresBind] = []

        public init(literalCapacity: Int, interpolationCount: Int) {}

        public mutating func appendLiteral(_ literal: String) {
            appendSQL(literal)
        }

        /// Binds a value as the next parameter.
        public mutating func appendInterpolation(_ value: some PostgresBindable) {
            binds.append(value.postgresBind)
            appendSQL("$\(binds.count)")
        }

        /// Binds an optional value as the next parameter, NULL when nil.
        public mutating func appendInterpolation<Value: PostgresBindable>(_ value: Value?) {
            binds.append(value.postgresBind)
            appendSQL("$\(binds.count)")
        }

        /// Inserts an identifier (table, column, channel), quoted by libpq.
        public mutating func appendInterpolation(identifier: String) {
            segments.append(.identifier(identifier))
        }

        /// Inserts SQL text as it is. Never pass untrusted input.
        public mutating func appendInterpolation(unsafeRaw sql: String) {
            appendSQL(sql)
        }

        private mutating func appendSQL(_ text: String) {
            if case .sql(let previous)? = segments.last {
                segments[segments.count - 1] = .sql(previous + text)
            } else {
                segments.append(.sql(text))
            }
        }
    }
}

import Foundation

/// One bound parameter: its text form (nil for NULL) and its type.
public struct PostgresBind: Sendable, Equatable {
    /// The value in PostgreSQL's text input form, or nil for SQL NULL.
    public var text: String?
    /// The parameter's type; ``PostgresDataType/unspecified`` lets the server infer it.
    public var type: PostgresDataType

    /// Makes a bind from a value's text form.
    public init(text: String?, type: PostgresDataType = .unspecified) {
        self.text = text
        self.type = type
    }

    /// SQL NULL, of unspecified type.
    public static let null = PostgresBind(text: nil)
}

extension PostgresBind: PostgresBindable {
    /// The bind itself, for a value whose text and type are given explicitly.
    public var postgresBind: PostgresBind { self }
}

/// A Swift value that can be sent as a query parameter.
public protocol PostgresBindable: Sendable {
    /// The value as a parameter.
    var postgresBind: PostgresBind { get }
}

extension String: PostgresBindable {
    /// Text, with its type left for the server to infer (so `$1` may be used as text, varchar,
    /// json or an enum alike).
    public var postgresBind: PostgresBind { PostgresBind(text: self) }
}

extension Substring: PostgresBindable {
    public var postgresBind: PostgresBind { PostgresBind(text: String(self)) }
}

extension Int: PostgresBindable {
    public var postgresBind: PostgresBind { PostgresBind(text: String(self), type: .int8) }
}

extension Int64: PostgresBindable {
    public var postgresBind: PostgresBind { PostgresBind(text: String(self), type: .int8) }
}

extension Int32: PostgresBindable {
    public var postgresBind: PostgresBind { PostgresBind(text: String(self), type: .int4) }
}

extension Int16: PostgresBindable {
    public var postgresBind: PostgresBind { PostgresBind(text: String(self), type: .int2) }
}

extension Bool: PostgresBindable {
    public var postgresBind: PostgresBind { PostgresBind(text: self ? "t" : "f", type: .bool) }
}

extension Double: PostgresBindable {
    public var postgresBind: PostgresBind {
        let text: String
        if isNaN { text = "NaN" } else if self == .infinity { text = "Infinity" } else if self == -.infinity {
            text = "-Infinity"
        } else { text = "\(self)" }
        return PostgresBind(text: text, type: .float8)
    }
}

extension Date: PostgresBindable {
    /// A `timestamptz` in UTC with microseconds.
    public var postgresBind: PostgresBind {
        PostgresBind(text: PostgresTimestamp.format(self), type: .timestamptz)
    }
}

extension Data: PostgresBindable {
    /// `bytea` in hex form.
    public var postgresBind: PostgresBind { PostgresBind(text: PostgresBytes.hex(self), type: .bytea) }
}

extension Array: PostgresBindable where Element == UInt8 {
    /// `bytea` in hex form.
    public var postgresBind: PostgresBind { PostgresBind(text: PostgresBytes.hex(self), type: .bytea) }
}

extension Optional: PostgresBindable where Wrapped: PostgresBindable {
    /// The wrapped value, or NULL of the wrapped value's type.
    public var postgresBind: PostgresBind {
        switch self {
        case .some(let value): value.postgresBind
        case .none: PostgresBind(text: nil, type: Wrapped.nullType)
        }
    }
}

extension PostgresBindable {
    /// The type NULL of this Swift type is sent as.
    static var nullType: PostgresDataType { .unspecified }
}

/// A value sent as JSON text, for a `json` or `jsonb` parameter.
///
/// ```swift
/// try connection.query("INSERT INTO events (body) VALUES (\(try PostgresJSON(event)))")
/// ```
public struct PostgresJSON: PostgresBindable {
    /// The JSON text, keys sorted.
    public let text: String

    /// Encodes a value as JSON.
    ///
    /// - Throws: the encoder's error when the value has no JSON form (a NaN, for example).
    public init<Value: Encodable>(_ value: Value) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        text = String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    public var postgresBind: PostgresBind { PostgresBind(text: text, type: .jsonb) }
}

import Foundation

/// One bound parameter: its value (nil text for NULL) and its type.
///
/// Values go to the server in text form, except `bytea` built from bytes, which goes in
/// binary form so that neither side converts it to and from hex.
public struct PostgresBind: Sendable, Equatable {
    /// How the value is held until it is sent.
    enum Value: Sendable {
        case null
        case text(String)
        /// Text held as its UTF-8 bytes, sent without first making a `String` of them.
        case utf8([UInt8])
        /// A `bytea` value, sent in binary form.
        case bytea([UInt8])
    }
    var value: Value
    /// The parameter's type; ``PostgresDataType/unspecified`` lets the server infer it.
    public var type: PostgresDataType

    /// Makes a bind from a value's text form.
    public init(text: String?, type: PostgresDataType = .unspecified) {
        value = text.map(Value.text) ?? .null
        self.type = type
    }

    /// Makes a bind from the UTF-8 bytes of a value's text form, for text that is already
    /// held as bytes (a JSON document, say). The bytes must be valid UTF-8.
    public init(utf8Text bytes: [UInt8], type: PostgresDataType = .unspecified) {
        value = .utf8(bytes)
        self.type = type
    }

    /// Makes a `bytea` bind, sent to the server as the bytes themselves.
    public init(bytea bytes: [UInt8]) {
        value = .bytea(bytes)
        type = .bytea
    }

    /// The value in PostgreSQL's text input form (`bytea` in hex form), or nil for SQL NULL;
    /// setting it makes the bind a text bind.
    public var text: String? {
        get {
            switch value {
            case .null: nil
            case .text(let text): text
            case .utf8(let bytes): String(decoding: bytes, as: UTF8.self)
            case .bytea(let bytes): PostgresBytes.hex(bytes)
            }
        }
        set { value = newValue.map(Value.text) ?? .null }
    }

    /// Whether the value is sent in binary form.
    var isBinary: Bool {
        if case .bytea = value { return true }
        return false
    }

    /// SQL NULL, of unspecified type.
    public static let null = PostgresBind(text: nil)

    /// Binds are equal when they send the same value as the same type, whatever form they
    /// hold it in.
    public static func == (left: PostgresBind, right: PostgresBind) -> Bool {
        left.type == right.type && left.text == right.text
    }
}

extension PostgresBind: PostgresBindable {
    /// The bind itself, for a value whose text and type are given explicitly.
    public var postgresBind: PostgresBind { self }
}

/// A Swift value that can be sent as a query parameter.
///
/// An optional of a bindable type binds too: `nil` is sent as NULL of ``nullType``, the type
/// the type's values are sent as, so a query that takes a value takes its absence alike.
public protocol PostgresBindable: Sendable {
    /// The value as a parameter.
    var postgresBind: PostgresBind { get }

    /// The type an absent value (`nil` of an optional) is sent as: the type of
    /// ``postgresBind``, or ``PostgresDataType/unspecified`` (the default) for a type whose
    /// values let the server infer theirs.
    static var nullType: PostgresDataType { get }
}

extension PostgresBindable {
    /// Unspecified: the server infers the type from the query.
    public static var nullType: PostgresDataType { .unspecified }
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
    public static var nullType: PostgresDataType { .int8 }
    public var postgresBind: PostgresBind { PostgresBind(text: String(self), type: .int8) }
}

extension Int64: PostgresBindable {
    public static var nullType: PostgresDataType { .int8 }
    public var postgresBind: PostgresBind { PostgresBind(text: String(self), type: .int8) }
}

extension Int32: PostgresBindable {
    public static var nullType: PostgresDataType { .int4 }
    public var postgresBind: PostgresBind { PostgresBind(text: String(self), type: .int4) }
}

extension Int16: PostgresBindable {
    public static var nullType: PostgresDataType { .int2 }
    public var postgresBind: PostgresBind { PostgresBind(text: String(self), type: .int2) }
}

extension Bool: PostgresBindable {
    public static var nullType: PostgresDataType { .bool }
    public var postgresBind: PostgresBind { PostgresBind(text: self ? "t" : "f", type: .bool) }
}

extension Double: PostgresBindable {
    public static var nullType: PostgresDataType { .float8 }
    public var postgresBind: PostgresBind {
        let text: String
        if isNaN { text = "NaN" } else if self == .infinity { text = "Infinity" } else if self == -.infinity {
            text = "-Infinity"
        } else { text = "\(self)" }
        return PostgresBind(text: text, type: .float8)
    }
}

extension Date: PostgresBindable {
    public static var nullType: PostgresDataType { .timestamptz }
    /// A `timestamptz` in UTC with microseconds.
    public var postgresBind: PostgresBind {
        PostgresBind(text: PostgresTimestamp.format(self), type: .timestamptz)
    }
}

extension Data: PostgresBindable {
    public static var nullType: PostgresDataType { .bytea }
    /// `bytea`, sent in binary form.
    public var postgresBind: PostgresBind { PostgresBind(bytea: Array(self)) }
}

extension Array: PostgresBindable where Element == UInt8 {
    public static var nullType: PostgresDataType { .bytea }
    /// `bytea`, sent in binary form.
    public var postgresBind: PostgresBind { PostgresBind(bytea: self) }
}

extension Optional: PostgresBindable where Wrapped: PostgresBindable {
    /// The wrapped value, or NULL of the wrapped value's type.
    public var postgresBind: PostgresBind {
        switch self {
        case .some(let value): value.postgresBind
        case .none: PostgresBind(text: nil, type: Wrapped.nullType)
        }
    }

    /// The wrapped type's: `nil` of a nested optional is NULL of the same type.
    public static var nullType: PostgresDataType { Wrapped.nullType }
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
    public static var nullType: PostgresDataType { .jsonb }
}

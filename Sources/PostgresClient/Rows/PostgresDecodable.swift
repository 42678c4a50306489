import Foundation

/// A Swift type that a column's text value can be decoded into.
///
/// NULL is decoded by asking for an optional: `row.decode(String?.self, "note")`.
public protocol PostgresDecodable: Sendable {
    /// Decodes the text form of a value of the given SQL type, or returns nil when it is not a
    /// valid value of this Swift type.
    static func decode(postgresText text: String, type: PostgresDataType) -> Self?
}

extension String: PostgresDecodable {
    public static func decode(postgresText text: String, type: PostgresDataType) -> String? { text }
}

extension FixedWidthInteger where Self: PostgresDecodable {
    public static func decode(postgresText text: String, type: PostgresDataType) -> Self? { Self(text) }
}

extension Int: PostgresDecodable {}
extension Int64: PostgresDecodable {}
extension Int32: PostgresDecodable {}
extension Int16: PostgresDecodable {}

extension Bool: PostgresDecodable {
    public static func decode(postgresText text: String, type: PostgresDataType) -> Bool? {
        switch text {
        case "t", "true": true
        case "f", "false": false
        default: nil
        }
    }
}

extension Double: PostgresDecodable {
    public static func decode(postgresText text: String, type: PostgresDataType) -> Double? {
        switch text {
        case "NaN": .nan
        case "Infinity": .infinity
        case "-Infinity": -.infinity
        default: Double(text)
        }
    }
}

extension Date: PostgresDecodable {
    /// Decodes `timestamptz`, `timestamp` (taken as UTC) and `date` (midnight UTC).
    public static func decode(postgresText text: String, type: PostgresDataType) -> Date? {
        PostgresTimestamp.parse(text)
    }
}

extension Data: PostgresDecodable {
    /// Decodes `bytea` in hex form.
    public static func decode(postgresText text: String, type: PostgresDataType) -> Data? {
        PostgresBytes.parse(text).map { Data($0) }
    }
}

extension Array: PostgresDecodable where Element == UInt8 {
    /// Decodes `bytea` in hex form.
    public static func decode(postgresText text: String, type: PostgresDataType) -> [UInt8]? {
        PostgresBytes.parse(text)
    }
}

/// A column value that could not be decoded into the Swift type asked for.
public struct PostgresDecodingError: Error, Sendable, CustomStringConvertible {
    /// The column's name.
    public var column: String
    /// The column's SQL type.
    public var sqlType: PostgresDataType
    /// The Swift type asked for.
    public var swiftType: String
    /// Why it failed, without the value itself.
    public var reason: String

    public var description: String {
        "cannot decode column \"\(column)\" of SQL type \(sqlType) as Swift \(swiftType): \(reason)"
    }
}

extension PostgresDecodable where Self: RawRepresentable, RawValue == String {
    /// The case whose raw value is the text; nil (a decode error naming the column) for any other text.
    public static func decode(postgresText text: String, type: PostgresDataType) -> Self? { Self(rawValue: text) }
}

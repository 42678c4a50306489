/// A PostgreSQL type, identified by its OID.
public struct PostgresDataType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The type's OID in `pg_type`.
    public let rawValue: UInt32
    /// Wraps an OID.
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// No type given: the server infers the parameter's type from how it is used.
    public static let unspecified = PostgresDataType(rawValue: 0)
    /// `boolean`
    public static let bool = PostgresDataType(rawValue: 16)
    /// `bytea`
    public static let bytea = PostgresDataType(rawValue: 17)
    /// `"char"`
    public static let char = PostgresDataType(rawValue: 18)
    /// `name`
    public static let name = PostgresDataType(rawValue: 19)
    /// `bigint`
    public static let int8 = PostgresDataType(rawValue: 20)
    /// `smallint`
    public static let int2 = PostgresDataType(rawValue: 21)
    /// `integer`
    public static let int4 = PostgresDataType(rawValue: 23)
    /// `text`
    public static let text = PostgresDataType(rawValue: 25)
    /// `oid`
    public static let oid = PostgresDataType(rawValue: 26)
    /// `json`
    public static let json = PostgresDataType(rawValue: 114)
    /// `real`
    public static let float4 = PostgresDataType(rawValue: 700)
    /// `double precision`
    public static let float8 = PostgresDataType(rawValue: 701)
    /// `character varying`
    public static let varchar = PostgresDataType(rawValue: 1043)
    /// `date`
    public static let date = PostgresDataType(rawValue: 1082)
    /// `timestamp without time zone`
    public static let timestamp = PostgresDataType(rawValue: 1114)
    /// `timestamp with time zone`
    public static let timestamptz = PostgresDataType(rawValue: 1184)
    /// `interval`
    public static let interval = PostgresDataType(rawValue: 1186)
    /// `numeric`
    public static let numeric = PostgresDataType(rawValue: 1700)
    /// `uuid`
    public static let uuid = PostgresDataType(rawValue: 2950)
    /// `jsonb`
    public static let jsonb = PostgresDataType(rawValue: 3802)
    /// `text[]`
    public static let textArray = PostgresDataType(rawValue: 1009)

    private static let names: [UInt32: String] = [
        0: "unspecified", 16: "boolean", 17: "bytea", 18: "\"char\"", 19: "name", 20: "bigint",
        21: "smallint", 23: "integer", 25: "text", 26: "oid", 114: "json", 700: "real",
        701: "double precision", 1009: "text[]", 1043: "character varying", 1082: "date",
        1114: "timestamp without time zone", 1184: "timestamp with time zone", 1186: "interval",
        1700: "numeric", 2950: "uuid", 3802: "jsonb",
    ]

    /// The SQL name of a common type, or `oid N` for others.
    public var description: String { Self.names[rawValue] ?? "oid \(rawValue)" }
}

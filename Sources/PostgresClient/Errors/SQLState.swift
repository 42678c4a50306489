/// A PostgreSQL SQLSTATE error code, such as `23505` for a unique violation.
///
/// Codes are five characters; the first two name the class. Compare against the named
/// constants, or match a whole class with ``errorClass``:
///
/// ```swift
/// catch let error as PostgresError where error.sqlState == .uniqueViolation { … }
/// catch let error as PostgresError where error.sqlState?.errorClass == .transactionRollback { … }
/// ```
public struct SQLState: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The five-character code.
    public let rawValue: String

    /// Wraps a five-character code.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The class of this code: its first two characters.
    public var errorClass: Class { Class(rawValue: String(rawValue.prefix(2))) }

    public var description: String { rawValue }

    /// A SQLSTATE class: the first two characters of a code.
    public struct Class: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The two-character class code.
        public let rawValue: String
        /// Wraps a two-character class code.
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// Class 08: the connection failed or broke.
        public static let connectionException = Class(rawValue: "08")
        /// Class 22: a value was out of range, malformed or otherwise wrong.
        public static let dataException = Class(rawValue: "22")
        /// Class 23: a constraint was violated.
        public static let integrityConstraintViolation = Class(rawValue: "23")
        /// Class 25: the statement is not allowed in the transaction's current state.
        public static let invalidTransactionState = Class(rawValue: "25")
        /// Class 28: authentication failed.
        public static let invalidAuthorizationSpecification = Class(rawValue: "28")
        /// Class 40: the transaction was rolled back (serialization failure, deadlock).
        public static let transactionRollback = Class(rawValue: "40")
        /// Class 42: a syntax error or an access rule was broken.
        public static let syntaxErrorOrAccessRuleViolation = Class(rawValue: "42")
        /// Class 53: the server ran out of a resource.
        public static let insufficientResources = Class(rawValue: "53")
        /// Class 55: the object is not in the required state (for example a lock is taken).
        public static let objectNotInPrerequisiteState = Class(rawValue: "55")
        /// Class 57: an operator intervened (cancel, termination, shutdown).
        public static let operatorIntervention = Class(rawValue: "57")
    }

    /// 08000: a connection failed.
    public static let connectionException = SQLState(rawValue: "08000")
    /// 08006: the connection broke.
    public static let connectionFailure = SQLState(rawValue: "08006")
    /// 08P01: the client or the server broke the wire protocol.
    public static let protocolViolation = SQLState(rawValue: "08P01")
    /// 0A000: the feature is not supported (also "cached plan must not change result type").
    public static let featureNotSupported = SQLState(rawValue: "0A000")
    /// 22001: a string was too long for its column.
    public static let stringDataRightTruncation = SQLState(rawValue: "22001")
    /// 22003: a number was out of range.
    public static let numericValueOutOfRange = SQLState(rawValue: "22003")
    /// 22023: a parameter's value is not one the function takes.
    public static let invalidParameterValue = SQLState(rawValue: "22023")
    /// 22P02: a value's text did not parse as its type.
    public static let invalidTextRepresentation = SQLState(rawValue: "22P02")
    /// 23502: a NOT NULL constraint was violated.
    public static let notNullViolation = SQLState(rawValue: "23502")
    /// 23503: a foreign key was violated.
    public static let foreignKeyViolation = SQLState(rawValue: "23503")
    /// 23505: a unique constraint was violated.
    public static let uniqueViolation = SQLState(rawValue: "23505")
    /// 23514: a CHECK constraint was violated.
    public static let checkViolation = SQLState(rawValue: "23514")
    /// 25006: the transaction or the server is read-only (what a standby answers a write with).
    public static let readOnlySQLTransaction = SQLState(rawValue: "25006")
    /// 25P02: the transaction is aborted; commands are ignored until its end.
    public static let inFailedSQLTransaction = SQLState(rawValue: "25P02")
    /// 26000: no prepared statement of that name exists (the server lost it, or a pooler
    /// moved the session).
    public static let invalidSQLStatementName = SQLState(rawValue: "26000")
    /// 28P01: the password was wrong.
    public static let invalidPassword = SQLState(rawValue: "28P01")
    /// 3D000: the database does not exist.
    public static let invalidCatalogName = SQLState(rawValue: "3D000")
    /// 2BP01: an object cannot be dropped because others depend on it (the detail names them).
    public static let dependentObjectsStillExist = SQLState(rawValue: "2BP01")
    /// 40001: a serialization failure; retry the transaction.
    public static let serializationFailure = SQLState(rawValue: "40001")
    /// 40P01: a deadlock was detected; retry the transaction.
    public static let deadlockDetected = SQLState(rawValue: "40P01")
    /// 42501: the role lacks a privilege.
    public static let insufficientPrivilege = SQLState(rawValue: "42501")
    /// 42601: a syntax error.
    public static let syntaxError = SQLState(rawValue: "42601")
    /// 42P01: the table does not exist.
    public static let undefinedTable = SQLState(rawValue: "42P01")
    /// 42703: the column does not exist.
    public static let undefinedColumn = SQLState(rawValue: "42703")
    /// 42883: the function does not exist.
    public static let undefinedFunction = SQLState(rawValue: "42883")
    /// 42P07: the table already exists.
    public static let duplicateTable = SQLState(rawValue: "42P07")
    /// 42710: the object already exists.
    public static let duplicateObject = SQLState(rawValue: "42710")
    /// 53300: the server has too many connections.
    public static let tooManyConnections = SQLState(rawValue: "53300")
    /// 54000: a limit of the server or of the called function was exceeded.
    public static let programLimitExceeded = SQLState(rawValue: "54000")
    /// 55P03: a lock could not be taken within lock_timeout (or NOWAIT).
    public static let lockNotAvailable = SQLState(rawValue: "55P03")
    /// 55006: the object is in use.
    public static let objectInUse = SQLState(rawValue: "55006")
    /// 57014: the statement was cancelled (statement_timeout or a cancel request).
    public static let queryCanceled = SQLState(rawValue: "57014")
    /// 57P01: the server is shutting down or the backend was terminated.
    public static let adminShutdown = SQLState(rawValue: "57P01")
    /// 57P02: the server crashed.
    public static let crashShutdown = SQLState(rawValue: "57P02")
    /// 57P03: the server is not accepting connections yet.
    public static let cannotConnectNow = SQLState(rawValue: "57P03")
}

import Cutover
import Foundation
import PostgresClient

/// One application instance in the reader registry.
public struct ReaderInstance: Sendable, Equatable {
    /// The instance's ID, unique in the fleet.
    public var instanceID: String
    /// The application's name.
    public var applicationName: String
    /// The application's version.
    public var applicationVersion: String
    /// The stored formats its readers understand ("v1", "v2"); empty when the registration
    /// could not be read.
    public var formats: [String]
    /// When it first registered.
    public var registeredAt: Date
    /// When its last heartbeat succeeded.
    public var lastSeenAt: Date
    /// How long before the listing that was, by the server's clock.
    public var silentFor: Duration
    /// Whether it heartbeats, is late, or went stale, judged against the staleness limit it was
    /// listed with.
    public var state: State
    /// Why the registration could not be read (formats that are not 1 to 16 format codes, text
    /// too long); nil when it could. An unreadable registration lists no format, so a live one
    /// counts as a reader that lacks v2 and still needs v1.
    public var problem: String? = nil

    /// Whether it heartbeat within the staleness limit it was listed with: live and late
    /// instances count for the switch's and contract's checks, stale ones do not.
    public var isLive: Bool { state != .stale }

    /// Whether its readers understand the v2 format.
    public var readsV2: Bool { problem == nil && formats.contains(DraftFormat.v2.rawValue) }

    /// How an instance's heartbeats stand.
    public enum State: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// It heartbeat within the first half of the staleness limit.
        case live
        /// Its last heartbeat is older than half the staleness limit: it missed heartbeats
        /// (they fail, or it hangs), and it still counts as live until the limit passes.
        case late
        /// No heartbeat within the staleness limit: the checks no longer count it.
        case stale

        /// The state's code, identical to the raw value.
        public var description: String { rawValue }
    }
}

/// The registry of application instances and the formats their readers understand, per plan,
/// in `cutover.readers`.
///
/// An instance registers with each plan whose data it reads, with the formats it reads of that
/// plan's entity; the checks of one plan's switch and contract count only that plan's readers.
/// Each process registers with a secret of its own, chosen when it starts; only the process
/// that knows it may refresh or remove its registration while it is live. Swift applications use
/// ``ReaderRegistration``; any other application heartbeats with plain SQL, every half minute
/// or so, with a secret of at least 16 characters that it keeps to itself:
///
/// ```sql
/// SELECT cutover.reader_heartbeat('orders', 'billing-web-7f3a', 'billing-web', '4.2.0', ARRAY['v1', 'v2'], :'secret');
/// SELECT cutover.reader_leave('orders', 'billing-web-7f3a', :'secret');   -- on a clean shutdown
/// ```
///
/// The calls without the plan are version 5's: they register with the drafts plan, and are
/// deprecated.
public enum ReaderRegistry {
    /// How long an instance stays live after its last heartbeat, unless told otherwise.
    public static let defaultStaleAfter: Duration = .seconds(120)
    /// How long a registration must be silent before another process may take its instance ID,
    /// and before it may be removed to make room (the registry's own rule, whatever
    /// `staleAfter` a listing uses).
    public static let takeoverAfter: Duration = .seconds(120)
    /// The most registrations the registry holds, every plan's together.
    public static let limit = 10_000
    /// The longest instance ID, application name or version.
    public static let maximumTextLength = 255
    /// The most formats one registration lists.
    public static let maximumFormats = 16

    /// Registers an instance with `plan`, or refreshes that registration.
    ///
    /// - Parameters:
    ///   - plan: the plan whose data the instance reads (1 to 255 characters).
    ///   - token: the registering process's secret (16 to 255 characters); see ``makeToken()``.
    /// - Throws: ``ReaderRegistryError`` when the registry refuses; a connection error.
    public static func heartbeat(plan: String, instanceID: String, applicationName: String, applicationVersion: String,
                                 formats: [String], token: String, on connection: PostgresConnection) throws {
        do {
            try connection.query("""
                SELECT cutover.reader_heartbeat(\(plan), \(instanceID), \(applicationName), \(applicationVersion), \(formats.joinedAsTextArray)::text[], \(token))
                """)
        } catch let error as PostgresError {
            throw ReaderRegistryError(error) ?? error
        }
    }

    /// Removes an instance's registration with `plan`, if it is the one `token` made.
    ///
    /// - Returns: whether a registration was removed.
    @discardableResult
    public static func leave(plan: String, instanceID: String, token: String, on connection: PostgresConnection) throws -> Bool {
        try connection.query("SELECT cutover.reader_leave(\(plan), \(instanceID), \(token)) AS removed")[0].decode(Bool.self, "removed")
    }

    /// Records that the instance's registration with `plan` follows `epoch` of that plan's
    /// writer path: every operation it starts from now on takes that epoch's path. Refreshes the
    /// registration too.
    ///
    /// - Returns: false when `plan` has no registration of `instanceID` with this secret (it went
    ///   silent and was taken over or removed, or was never made): heartbeat with the plan first.
    /// - Throws: ``ReaderRegistryError/invalid(_:)`` for a plan without state or an epoch it
    ///   has not reached; a connection error.
    @discardableResult
    public static func follows(instanceID: String, token: String, plan: String, epoch: Int64,
                               on connection: PostgresConnection) throws -> Bool {
        do {
            return try connection.query("""
                SELECT cutover.reader_follows(\(instanceID), \(token), \(plan), \(epoch)) AS recorded
                """)[0].decode(Bool.self, "recorded")
        } catch let error as PostgresError {
            throw ReaderRegistryError(error) ?? error
        }
    }

    /// Every instance registered with `plan`, with the epoch of that plan it last reported
    /// following (nil when it never did), liveness judged against `staleAfter`. One statement.
    public static func followers(plan: String, staleAfter: Duration = defaultStaleAfter,
                                 on connection: PostgresConnection) throws -> [FleetMember] {
        let seconds = Double(staleAfter.components.seconds) + Double(staleAfter.components.attoseconds) / 1e18
        let cut = Int32(maximumTextLength + 1)
        return try connection.query("""
            SELECT left(r.instance_id, \(cut)) AS instance_id, left(r.application_name, \(cut)) AS application_name,
                   r.last_seen_at > now() - make_interval(secs => \(seconds)) AS live, e.epoch
              FROM cutover.readers r LEFT JOIN cutover.reader_epochs e ON e.plan = r.plan AND e.instance_id = r.instance_id
             WHERE r.plan = \(plan)
             ORDER BY r.instance_id
            """).map { row in
            FleetMember(instanceID: try row.decode(String.self, "instance_id"),
                        applicationName: try row.decode(String.self, "application_name"),
                        isLive: try row.decode(Bool.self, "live"), epoch: try row.decode(Int64?.self, "epoch"))
        }
    }

    /// A new secret for one process's registration: 32 random bytes in hexadecimal.
    public static func makeToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in
            let byte = UInt8.random(in: 0...255, using: &generator)
            return String(byte >> 4, radix: 16) + String(byte & 0xF, radix: 16)
        }.joined()
    }

    /// Every instance registered with `plan`, live ones first, with liveness judged against
    /// `staleAfter`: one silent for more than half of it is ``ReaderInstance/State/late``.
    /// Another plan's registrations are not listed, whatever they read.
    ///
    /// Applications write the registry, so a registration is read as untrusted data: text is cut
    /// after ``maximumTextLength`` characters and a registration that does not read as one is
    /// listed with its ``ReaderInstance/problem`` instead of failing the listing.
    public static func list(plan: String, staleAfter: Duration = defaultStaleAfter,
                            on connection: PostgresConnection) throws -> [ReaderInstance] {
        let seconds = Double(staleAfter.components.seconds) + Double(staleAfter.components.attoseconds) / 1e18
        let cut = Int32(maximumTextLength + 1)
        return try connection.query("""
            SELECT left(instance_id, \(cut)) AS instance_id, left(application_name, \(cut)) AS application_name,
                   left(application_version, \(cut)) AS application_version,
                   left(array_to_json(formats)::text, \(cut * Int32(maximumFormats))) AS formats,
                   registered_at, last_seen_at, last_seen_at > now() - make_interval(secs => \(seconds)) AS live,
                   last_seen_at > now() - make_interval(secs => \(seconds / 2)) AS heartbeating,
                   (extract(epoch FROM now() - last_seen_at) * 1000)::bigint AS silent_ms
              FROM cutover.readers WHERE plan = \(plan) ORDER BY live DESC, heartbeating DESC, application_name, instance_id
            """).map(instance)
    }

    /// One row of the registry, however malformed.
    private static func instance(_ row: PostgresRow) -> ReaderInstance {
        var problems: [String] = []
        func decode<T: PostgresDecodable>(_ column: String, or fallback: T) -> T {
            do {
                return try row.decode(T.self, column)
            } catch {
                problems.append("\(column) unreadable")
                return fallback
            }
        }
        func text(_ column: String) -> String {
            let value = decode(column, or: "")
            if value.count > maximumTextLength { problems.append("\(column) longer than \(maximumTextLength) characters") }
            return value
        }
        var instance = ReaderInstance(instanceID: text("instance_id"), applicationName: text("application_name"),
                                      applicationVersion: text("application_version"), formats: [],
                                      registeredAt: decode("registered_at", or: Date(timeIntervalSince1970: 0)),
                                      lastSeenAt: decode("last_seen_at", or: Date(timeIntervalSince1970: 0)),
                                      silentFor: .milliseconds(decode("silent_ms", or: Int64(0))),
                                      state: decode("heartbeating", or: true) ? .live : decode("live", or: true) ? .late : .stale)
        // Null elements decode, so that a list holding one is told apart from no list at all.
        let listed = (try? row.decodeJSON([String?].self, "formats")) ?? []
        let codes = listed.compactMap { $0 }
        if !listed.isEmpty, codes.count == listed.count, codes.count <= maximumFormats, codes.allSatisfy(isFormatCode) {
            instance.formats = codes
        } else {
            problems.append("formats are not 1 to \(maximumFormats) format codes")
        }
        instance.problem = problems.isEmpty ? nil : problems.joined(separator: "; ")
        return instance
    }

    /// Whether `code` is a format code: `v` and one to four digits.
    static func isFormatCode(_ code: String) -> Bool {
        let digits = code.utf8.dropFirst()
        return code.utf8.first == UInt8(ascii: "v") && (1...4).contains(digits.count)
            && digits.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
}

/// Why the reader registry refused a heartbeat.
public enum ReaderRegistryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An instance ID, name, version, format list or secret the registry does not take; the
    /// server's message says which.
    case invalid(String)
    /// Another live process registered the instance ID, with another secret.
    case heldByAnotherProcess
    /// The registry holds its ``ReaderRegistry/limit`` of live registrations.
    case full
    /// A ``ReaderRegistration`` was asked to register with one plan and report the epochs of
    /// another's writer path.
    case followsAnotherPlan(registered: String, followed: String)

    /// The registry's refusal `error` is, if it is one.
    init?(_ error: PostgresError) {
        switch error.sqlState {
        case .invalidParameterValue?: self = .invalid(error.message)
        case .uniqueViolation?: self = .heldByAnotherProcess
        case .programLimitExceeded?: self = .full
        default: return nil
        }
    }

    public var description: String {
        switch self {
        case .invalid(let message): "heartbeat refused: \(message)"
        case .heldByAnotherProcess:
            "heartbeat refused: the instance ID is registered by another live process"
        case .full:
            "heartbeat refused: the reader registry holds \(ReaderRegistry.limit) live registrations, its limit"
        case .followsAnotherPlan(let registered, let followed):
            "registration refused: it is for plan \(DisplayText.quoted(registered)) and follows the writer path of plan \(DisplayText.quoted(followed))"
        }
    }
}

extension Array where Element == String {
    /// A PostgreSQL text[] literal: `{"a","b"}` with quotes and backslashes escaped.
    var joinedAsTextArray: String {
        "{" + map { "\"" + $0.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\"" }.joined(separator: ",") + "}"
    }
}

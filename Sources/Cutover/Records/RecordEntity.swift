/// An application's entity, declared once: its plan, its key, its content and its two formats.
///
/// A protocol of static requirements rather than a struct of closures, so that the
/// content type is part of every request's type (`SaveRequest<Orders>` cannot carry a
/// draft's content) and declaring an entity costs no value to pass around.
///
/// ```swift
/// enum Orders: RecordEntity {
///     static let planName = "orders-status-code"
///     static let keyColumns = [RecordKeyColumn(name: "id", kind: .bigint)]
///     static func encodeContent(_ status: OrderStatus, into encoder: inout CanonicalEncoder) { … }
///     static func violation(of status: OrderStatus) -> SaveViolation? { nil }
///     static let legacy = RecordFormatCodec<OrderStatus>(…)   // status text
///     static let modern = RecordFormatCodec<OrderStatus>(…)   // status_code smallint
/// }
/// ```
public protocol RecordEntity: Sendable {
    /// What a record says; what a save writes and a reader reads.
    associatedtype Content: Sendable & Hashable

    /// The plan that migrates this entity's table; part of every fingerprint.
    static var planName: String { get }

    /// The key's columns, in order: one, or several for a composite key.
    static var keyColumns: [RecordKeyColumn] { get }

    /// The limits a request's scope, operation ID and text key parts must keep.
    static var limits: RecordLimits { get }

    /// Appends the content's canonical bytes; equal content must give equal bytes.
    static func encodeContent(_ content: Content, into encoder: inout CanonicalEncoder)

    /// The first limit `content` breaks, or nil.
    static func violation(of content: Content) -> SaveViolation?

    /// The legacy format: what the legacy writer stores and old readers read.
    static var legacy: RecordFormatCodec<Content> { get }

    /// The modern format: what the modern writer stores.
    static var modern: RecordFormatCodec<Content> { get }
}

extension RecordEntity {
    /// The default limits: ``RecordLimits/standard``.
    public static var limits: RecordLimits { .standard }

    /// The codec of `path`'s format.
    @inlinable
    public static func codec(for path: SavePath) -> RecordFormatCodec<Content> {
        path == .legacy ? legacy : modern
    }
}

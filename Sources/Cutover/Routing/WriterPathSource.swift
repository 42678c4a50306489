/// Where a ``SaveRouter`` learns which writer path to use, for example a fleet-wide switch.
///
/// The read is synchronous so the router can choose a writer before any
/// suspension point; a conformer keeps the latest value at hand (refreshed by
/// notification or polling) instead of fetching it on demand.
public protocol WriterPathSource: Sendable {
    /// The path new operations should take now.
    func currentPath() -> SavePath
}

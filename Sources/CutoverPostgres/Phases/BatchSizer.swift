import Cutover

/// Sizes a backfill's batches so that each takes about a target time, on a fast server and a
/// slow one, on an idle one and a busy one alike.
///
/// After each full batch the next size is the last one scaled by the target over the time the
/// batch took, at most doubled and at least halved, so that one slow batch (a lock wait, a
/// checkpoint) does not throw the size far off. A batch within a tenth of the target changes
/// nothing. The batch that ends a pass (no key after it) may have found fewer rows than it
/// asked for, says nothing of the time a full one takes, and is not counted. A target of zero
/// keeps every batch at the first size.
public struct BatchSizer: Sendable, Equatable {
    /// The time each batch should take; zero does not adapt.
    public private(set) var target: Duration
    /// The sizes the sizer keeps to.
    public let range: ClosedRange<Int>
    /// Rows the next batch asks for.
    public private(set) var size: Int

    /// A sizer starting at `initial` rows.
    public init(initial: Int, target: Duration, range: ClosedRange<Int> = PlanLimits.batchSize) {
        self.target = target
        self.range = range
        size = min(max(initial, range.lowerBound), range.upperBound)
    }

    /// Follows `target` from the next batch on (an operator's retune); the size stays where it is.
    public mutating func retarget(_ target: Duration) {
        self.target = target
    }

    /// Whether the size follows the batches' time.
    public var isAdaptive: Bool { target > .zero }

    /// Takes account of a batch of ``size`` rows that took `time`; `endedPass` when it was the
    /// last of its pass.
    public mutating func record(time: Duration, endedPass: Bool) {
        guard isAdaptive, !endedPass else { return }
        let ratio = time > .zero ? target / time : 2
        guard ratio < 0.9 || ratio > 1.1 else { return }
        let scaled = (Double(size) * min(2, max(0.5, ratio))).rounded()
        size = Int(min(Double(range.upperBound), max(Double(range.lowerBound), scaled)))
    }
}

/// A plan as it is now against what was recorded of it, its pins (``PlanPins``, recorded when
/// its first step completed) and the files each step applied: the verdict of the runner's check
/// "applied SQL unchanged".
///
/// A change to what the operator wrote is refused. A declarative plan's compiled parts may differ
/// with nothing the operator wrote changed, when a later Cutover compiles the same declaration
/// into other text: the migration goes on when the plan's declaration and compiler compatibility
/// were pinned and are unchanged, or, for a plan pinned before they were, when the operator
/// accepts it.
///
/// ```swift
/// let comparison = PlanPinComparison(pins: pins, current: checksums, recorded: records, acceptsRecompiled: false)
/// if case .recompiled = comparison { /* the step goes on; record the pins as they are now */ }
/// ```
public enum PlanPinComparison: Sendable, Equatable {
    /// A checksum recorded of a part of the plan.
    public struct Record: Sendable, Equatable {
        /// The kind of the step that applied the file, or nil for a pin of the plan.
        public var step: String?
        /// The part's name: a file's path, or a pin's name.
        public var part: String
        /// The checksum recorded.
        public var checksum: String

        /// A checksum of `part`, recorded when `step` applied it (nil: when the plan began).
        public init(step: String?, part: String, checksum: String) {
            self.step = step
            self.part = part
            self.checksum = checksum
        }
    }

    /// Nothing differs.
    case unchanged
    /// Only compiled parts differ, named in `parts`: the declaration and the compiler
    /// compatibility are pinned and unchanged, or, when they are not pinned, the operator
    /// accepted it (`isAcceptedByOperator`).
    case recompiled(parts: [String], isAcceptedByOperator: Bool)
    /// Something the operator wrote changed, or any part of a plan of SQL files: each change in words.
    case changed([String])
    /// The plan began compiled at compiler compatibility `then`, and this version compiles at `now`;
    /// any other change in words.
    case compatibilityChanged(then: Int, now: Int, changes: [String])
    /// Only compiled parts differ, but the plan was pinned before its declaration was, and the
    /// operator did not accept it: each change in words.
    case recompiledUnpinned([String])

    /// Compares `current`, the checksum of each of `pins`' parts by name, with `recorded`, in
    /// the order refusals name them.
    public init(pins: PlanPins, current: [String: String], recorded: [Record], acceptsRecompiled: Bool) {
        var changes: [(part: String, origin: PlanPins.Origin, text: String)] = []
        var reported: Set<String> = []
        var pinned: Set<String> = []
        var pinnedCompatibility: Int?
        for record in recorded {
            let origin = pins.origin(of: record.part)
            if record.step == nil {
                pinned.insert(record.part)
                // Its number is in its name: one that differs is judged below, by itself.
                if case .compatibility(let number) = origin {
                    pinnedCompatibility = number
                    continue
                }
            }
            let now = current[record.part]
            guard now != record.checksum, reported.insert(record.part).inserted else { continue }
            let subject = record.step.map { "\($0) step's \(record.part)" } ?? record.part
            let text = if let now {
                record.step == nil
                    ? "\(subject) changed since the plan began (then \(record.checksum.prefix(12)), now \(now.prefix(12)))"
                    : "\(subject) changed since it was applied (applied \(record.checksum.prefix(12)), now \(now.prefix(12)))"
            } else {
                "\(subject) is no longer in the plan"
            }
            changes.append((record.part, origin, text))
        }
        if !pinned.isEmpty {
            for part in current.keys.sorted() where !pinned.contains(part) {
                let origin = pins.origin(of: part)
                switch origin {
                case .declaration, .compatibility:
                    // Pins of a plan that began before they were recorded, not changes to it.
                    continue
                case .handWritten, .declared, .compiled:
                    changes.append((part, origin, "\(part) was added since the plan began"))
                }
            }
        }
        let texts = changes.map(\.text)
        if let then = pinnedCompatibility, let now = pins.compatibility, then != now {
            self = .compatibilityChanged(then: then, now: now, changes: texts)
            return
        }
        guard !changes.isEmpty else {
            self = .unchanged
            return
        }
        // Unchanged, since a changed declaration is a change below that nothing accepts.
        let isDeclarationPinned = pinned.contains(PlanPins.declarationPart) && pinnedCompatibility != nil
        let isAcceptable = { (origin: PlanPins.Origin) -> Bool in
            switch origin {
            case .compiled: true
            // What this version reads of a pinned declaration: read differently, never changed.
            case .declared: isDeclarationPinned
            case .handWritten, .declaration, .compatibility: false
            }
        }
        guard pins.isDeclarative, changes.allSatisfy({ isAcceptable($0.origin) }) else {
            self = .changed(texts)
            return
        }
        if isDeclarationPinned || acceptsRecompiled {
            self = .recompiled(parts: changes.map(\.part), isAcceptedByOperator: !isDeclarationPinned)
        } else {
            self = .recompiledUnpinned(texts)
        }
    }

    /// Whether the step may go on.
    public var isPassed: Bool {
        switch self {
        case .unchanged, .recompiled: true
        case .changed, .compatibilityChanged, .recompiledUnpinned: false
        }
    }
}

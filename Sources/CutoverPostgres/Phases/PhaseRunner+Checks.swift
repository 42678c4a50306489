import Cutover
import Foundation
import PostgresClient

extension PhaseRunner {
    /// The checks that must pass before `step`, run now; nothing is changed.
    public func checks(before step: PhaseStep, state: MigrationState) throws -> [CheckOutcome] {
        var results = [try appliedSQLUnchanged()]
        switch step {
        case .expand:
            results += try planChecks(.expand)
        case .switchModern:
            results += try planChecks(.switch)
            results.append(try readersCheck())
        case .switchLegacy:
            results.append(try contractNotBegun())
        case .backfill:
            results += try planChecks(.backfill)
        case .contract:
            results.append(try modernWriterWindow(state))
            results.append(try noLegacySessions())
            results.append(try noLiveReaderNeedsV1())
            results.append(try noRecentLegacyWrites())
            results += try planChecks(.contract)
        case .revertExpand:
            break
        }
        return results
    }

    /// The window contract waits for: the option's, else the plan's.
    var window: Duration { options.modernWriterWindow ?? plan.modernWriterWindow }

    /// Every SQL file applied so far is unchanged on disk.
    func appliedSQLUnchanged() throws -> CheckOutcome {
        var changed: [String] = []
        for row in try connection.query("""
            SELECT step, file, checksum FROM cutover.applied_files WHERE plan = \(plan.name) ORDER BY applied_at, file
            """) {
            let step = try row.decode(String.self, "step")
            let file = try row.decode(String.self, "file")
            let recorded = try row.decode(String.self, "checksum")
            guard let text = source.files[file] else {
                changed.append("\(step) step's \(file) is no longer in the plan")
                continue
            }
            let now = try checksum(text)
            if now != recorded {
                changed.append("\(step) step's \(file) changed since it was applied (applied \(recorded.prefix(12)), now \(now.prefix(12)))")
            }
        }
        return CheckOutcome(name: "applied SQL unchanged", isPassed: changed.isEmpty,
                            observed: changed.isEmpty ? "unchanged" : changed.joined(separator: "; "), expected: "unchanged",
                            message: "restore the applied files as they were; fix forward with a new plan step instead")
    }

    /// The plan's own checks for a step kind.
    func planChecks(_ kind: PlanStep.Kind) throws -> [CheckOutcome] {
        try (plan.step(kind)?.checks ?? []).map { check in
            let sql: String
            switch check.query {
            case .inline(let text): sql = text
            case .file(let path): sql = source.text(path)
            }
            do {
                let rows = try connection.query(PostgresQuery(unsafeSQL: sql))
                let observed = rows.first.flatMap { $0.text(at: 0) }
                return CheckOutcome(name: check.name, isPassed: check.expectation.evaluate(observed: observed),
                                    observed: observed ?? "NULL", expected: check.expectation.description, message: check.message)
            } catch let error as PostgresError {
                return CheckOutcome(name: check.name, isPassed: false, observed: "error: \(error.description)",
                                    expected: check.expectation.description, message: check.message)
            }
        }
    }

    /// Every live reader understands v2. With no live reader registered the check fails safe,
    /// unless the operator forces it (which the history records).
    func readersCheck() throws -> CheckOutcome {
        let live = try ReaderRegistry.list(staleAfter: options.readerStaleAfter, on: connection).filter(\.isLive)
        let expected = "every live reader lists v2"
        if live.isEmpty {
            return CheckOutcome(name: "live readers understand v2", isPassed: options.forceReaders,
                                observed: "no live reader registered" + (options.forceReaders ? " (forced with --force-readers)" : ""),
                                expected: expected,
                                message: "register the fleet's readers, or pass --force-readers if you know every reader reads v2")
        }
        let lacking = live.filter { !$0.readsV2 }
        return CheckOutcome(name: "live readers understand v2", isPassed: lacking.isEmpty,
                            observed: lacking.isEmpty ? "\(live.count) live, all read v2"
                                : "\(lacking.count) of \(live.count) live lack v2: " + Self.names(lacking),
                            expected: expected, message: "upgrade those instances, or wait until their heartbeats expire")
    }

    /// No live reader still needs the v1 representation that contract removes.
    func noLiveReaderNeedsV1() throws -> CheckOutcome {
        let needing = try ReaderRegistry.list(staleAfter: options.readerStaleAfter, on: connection)
            .filter { $0.isLive && !$0.readsV2 }
        return CheckOutcome(name: "no live reader needs v1", isPassed: needing.isEmpty,
                            observed: needing.isEmpty ? "none" : "\(needing.count) live: " + Self.names(needing),
                            expected: "none", message: "those instances read only v1; upgrade or stop them first")
    }

    private static func names(_ readers: [ReaderInstance]) -> String {
        let shown = readers.prefix(5).map { "\($0.instanceID) (\($0.applicationName) \($0.applicationVersion): \($0.formats.joined(separator: ",")))" }
        return shown.joined(separator: ", ") + (readers.count > 5 ? " and \(readers.count - 5) more" : "")
    }

    /// Switching back to legacy needs the v1 representation, which contract removes.
    func contractNotBegun() throws -> CheckOutcome {
        let applied = try appliedChecksums(step: .contract).keys.sorted()
        return CheckOutcome(name: "contract not begun", isPassed: applied.isEmpty,
                            observed: applied.isEmpty ? "no contract file applied" : "applied: " + applied.joined(separator: ", "),
                            expected: "no contract file applied",
                            message: "contract has begun; finish it and fix forward")
    }

    /// The modern writer has been the writer for at least the window.
    func modernWriterWindow(_ state: MigrationState) throws -> CheckOutcome {
        let required = window
        let expected = "modern for at least \(Self.words(required))"
        guard state.writerPath == .modern else {
            return CheckOutcome(name: "modern writer for the window", isPassed: false, observed: "writer is \(state.writerPath)",
                                expected: expected, message: "switch to the modern writer and wait out the window")
        }
        let seconds = try connection.query("""
            SELECT extract(epoch FROM now() - writer_switched_at)::float8 AS elapsed FROM cutover.migration_state WHERE plan = \(plan.name)
            """)[0].decode(Double?.self, "elapsed") ?? 0
        let elapsed = Duration.milliseconds(Int64(seconds * 1000))
        return CheckOutcome(name: "modern writer for the window", isPassed: elapsed >= required,
                            observed: "modern for \(Self.words(elapsed))", expected: expected,
                            message: "wait until the modern writer has run for the whole window")
    }

    /// No session whose application_name matches the plan's legacy pattern is connected.
    func noLegacySessions() throws -> CheckOutcome {
        guard let pattern = plan.legacyApplicationPattern else {
            return CheckOutcome(name: "no legacy session connected", isPassed: true, observed: "no pattern in the plan",
                                expected: "none connected", message: "")
        }
        let sessions = try connection.query("""
            SELECT pid, application_name FROM pg_stat_activity
             WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name LIKE \(pattern)
             ORDER BY pid
            """).map { "pid \(try $0.decode(Int32.self, "pid")) (\(try $0.decode(String.self, "application_name")))" }
        return CheckOutcome(name: "no legacy session connected", isPassed: sessions.isEmpty,
                            observed: sessions.isEmpty ? "none" : "\(sessions.count) connected: " + sessions.joined(separator: ", "),
                            expected: "none connected matching '\(pattern)'",
                            message: "stop or upgrade the old application versions first")
    }

    /// No write in the legacy format reached the table within the window.
    func noRecentLegacyWrites() throws -> CheckOutcome {
        let row = try connection.query("""
            SELECT CASE WHEN last_write_at = '-infinity' THEN NULL
                        ELSE extract(epoch FROM now() - last_write_at)::float8 END AS age
              FROM cutover.legacy_activity WHERE table_name = \(plan.table)
            """).first
        let age = try row?.decode(Double?.self, "age")
        let expected = "none within \(Self.words(window))"
        guard let age else {
            return CheckOutcome(name: "no legacy write within the window", isPassed: true, observed: "none seen",
                                expected: expected, message: "")
        }
        let elapsed = Duration.milliseconds(Int64(age * 1000))
        return CheckOutcome(name: "no legacy write within the window", isPassed: elapsed >= window,
                            observed: "last one \(Self.words(elapsed)) ago", expected: expected,
                            message: "something still writes the legacy format; find it before removing that format")
    }

    /// A duration in words: 0s, 45s, 3m12s, 2h5m, 7d.
    static func words(_ duration: Duration) -> String {
        var seconds = Int64(duration.components.seconds)
        guard seconds > 0 else { return "0s" }
        var parts: [String] = []
        for (unit, size) in [("d", Int64(86_400)), ("h", 3600), ("m", 60), ("s", 1)] where seconds >= size {
            parts.append("\(seconds / size)\(unit)")
            seconds %= size
            if parts.count == 2 { break }
        }
        return parts.joined()
    }
}

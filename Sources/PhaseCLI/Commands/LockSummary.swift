import Cutover
import Foundation

/// Names the table locks a plan's SQL takes, statement by statement, for `phase plan` and dry
/// runs. An estimate from each statement's leading words, not from the server.
enum LockSummary {
    /// Leading words of a statement and the lock it takes; the first match wins.
    private static let rules: [(prefix: String, lock: String)] = [
        ("CREATE INDEX CONCURRENTLY", "SHARE UPDATE EXCLUSIVE (create index concurrently; writers go on)"),
        ("CREATE UNIQUE INDEX CONCURRENTLY", "SHARE UPDATE EXCLUSIVE (create index concurrently; writers go on)"),
        ("DROP INDEX CONCURRENTLY", "SHARE UPDATE EXCLUSIVE (drop index concurrently)"),
        ("CREATE INDEX", "SHARE (create index; blocks writers)"),
        ("CREATE UNIQUE INDEX", "SHARE (create index; blocks writers)"),
        ("CREATE TRIGGER", "SHARE ROW EXCLUSIVE (create trigger; brief)"),
        ("CREATE OR REPLACE TRIGGER", "SHARE ROW EXCLUSIVE (create trigger; brief)"),
        ("CREATE OR REPLACE FUNCTION", "none on tables (function)"),
        ("CREATE FUNCTION", "none on tables (function)"),
        ("DROP FUNCTION", "none on tables (function)"),
        ("DO", "as its body's statements (DO block)"),
        ("SET", "none on tables (setting)"),
        ("ALTER TABLE", "ACCESS EXCLUSIVE (alter table; brief, under the lock timeout)"),
        ("DROP TRIGGER", "ACCESS EXCLUSIVE (drop trigger; brief)"),
        ("DROP INDEX", "ACCESS EXCLUSIVE (drop index; brief)"),
        ("DROP TABLE", "ACCESS EXCLUSIVE (drop table)"),
        ("UPDATE", "ROW EXCLUSIVE (update rows)"),
        ("INSERT", "ROW EXCLUSIVE (insert rows)"),
        ("DELETE", "ROW EXCLUSIVE (delete rows)"),
        ("WITH", "ROW EXCLUSIVE (rows it writes)"),
        ("SELECT", "ACCESS SHARE (read)"),
    ]

    static func describe(_ sql: String) -> String {
        var found: [String] = []
        for statement in SQLStatements.split(sql) {
            let words = statement.uppercased().split(whereSeparator: \.isWhitespace).joined(separator: " ")
            var lock = "unknown (\(words.split(separator: " ").prefix(2).joined(separator: " ")))"
            if words.hasPrefix("ALTER TABLE"), words.contains("VALIDATE CONSTRAINT") {
                lock = "SHARE UPDATE EXCLUSIVE (validate constraint; reads and writes go on)"
            } else if let rule = rules.first(where: { words == $0.prefix || words.hasPrefix($0.prefix + " ") }) {
                lock = rule.lock
            }
            if !found.contains(lock) { found.append(lock) }
        }
        return found.isEmpty ? "none" : found.joined(separator: "; ")
    }
}

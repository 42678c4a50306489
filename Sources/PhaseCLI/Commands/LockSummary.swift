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
        ("CREATE OR REPLACE FUNCTION", "none on tables (function)"),
        ("CREATE FUNCTION", "none on tables (function)"),
        ("DROP FUNCTION", "none on tables (function)"),
        ("DO", "as its body's statements (DO block)"),
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
        for statement in statements(sql) {
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

    /// The statements of a SQL text, without comments, split at semicolons outside quotes and
    /// dollar-quoted bodies.
    static func statements(_ sql: String) -> [String] {
        var statements: [String] = []
        var current = ""
        let characters = Array(sql)
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if character == "-", index + 1 < characters.count, characters[index + 1] == "-" {
                while index < characters.count, characters[index] != "\n" { index += 1 }
                continue
            }
            if character == "'" {
                current.append(character)
                index += 1
                while index < characters.count {
                    current.append(characters[index])
                    if characters[index] == "'" { index += 1; break }
                    index += 1
                }
                continue
            }
            if character == "$", let tagEnd = characters[(index + 1)...].firstIndex(where: { !($0.isLetter || $0.isNumber || $0 == "_") }),
               characters[tagEnd] == "$" {
                let tag = String(characters[index...tagEnd])
                current += tag
                index = tagEnd + 1
                // Skip to the closing tag.
                while index < characters.count {
                    if characters[index] == "$", String(characters[index..<min(characters.count, index + tag.count)]) == tag {
                        current += tag
                        index += tag.count
                        break
                    }
                    current.append(characters[index])
                    index += 1
                }
                continue
            }
            if character == ";" {
                statements.append(current)
                current = ""
            } else {
                current.append(character)
            }
            index += 1
        }
        statements.append(current)
        return statements.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
    }
}

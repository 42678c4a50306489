/// What `phase new` wrote, and what to do next.
struct NewPlanResult: CommandResult {
    let path: String
    let folder: String
    let plan: StartingPlan
    let table: TableInspection
    let isOverwritten: Bool

    /// Where the key comes from: `primary key orders_pkey`.
    private var keySource: String {
        (table.key.isPrimary ? "primary key " : "unique index over NOT NULL columns ") + table.key.index
    }

    /// The commands to run next, in order.
    private var next: [String] {
        let plan = "--plan \(Self.shellWord(folder))"
        return ["edit \(path): replace each <edit: …> placeholder, and list in \"columns\" the existing columns its expressions read "
                    + "(docs/plans.md has every key and operation)",
                "phase \(plan) plan", "phase \(plan) init", "phase \(plan) expand"]
    }

    var text: String {
        var out = ["\(isOverwritten ? "overwrote" : "wrote") \(path): plan \(plan.name) for table \(plan.table), key "
                   + "\(plan.key.joined(separator: ", ")) (\(keySource))",
                   "columns: " + table.columns.map { "\($0.name) \($0.type)\($0.isNotNull ? " NOT NULL" : "")" }.joined(separator: ", "),
                   "its one operation, an add_column, is a template: the plan reader refuses the plan, naming the first placeholder, until you edit them",
                   "next:"]
        out += next.map { "  " + $0 }
        return out.joined(separator: "\n")
    }

    var json: JSONResult {
        ["path": .string(path), "plan": .string(plan.name), "table": .string(plan.table),
         "key": .array(plan.key.map(JSONResult.string)), "keySource": .string(keySource), "overwritten": .bool(isOverwritten),
         "columns": .array(table.columns.map { ["name": .string($0.name), "type": .string($0.type), "notNull": .bool($0.isNotNull)] }),
         "next": .array(next.map(JSONResult.string))]
    }

    /// `text` as one word of a POSIX shell: bare when it holds only safe characters, else in single quotes.
    private static func shellWord(_ text: String) -> String {
        let safe = !text.isEmpty && text.unicodeScalars.allSatisfy { scalar in
            ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || "/._-+=:,@".unicodeScalars.contains(scalar)
        }
        return safe ? text : "'" + text.replacing("'", with: "'\\''") + "'"
    }
}

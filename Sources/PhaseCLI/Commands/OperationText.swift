import Cutover

/// One line for each operation of a declarative plan, as `phase plan` lists them: its name as
/// the plan spells it and what it changes.
enum OperationText {
    /// `alter_column status -> status_code smallint NOT NULL CHECK`.
    static func line(_ operation: DeclarativeOperation) -> (kind: String, summary: String) {
        switch operation {
        case .addColumn(let definition):
            return ("add_column", column(definition) + (definition.up.map { ", up \($0.text)" } ?? ""))
        case .alterColumn(let change):
            return ("alter_column", change.from.joined(separator: ", ") + " -> " + change.to.map(column).joined(separator: ", "))
        case .dropColumn(let name, let down):
            return ("drop_column", "\(name), old readers get \(down.text)")
        case .createIndex(let index):
            let kind = index.isUnique ? "unique \(index.method)" : index.method
            return ("create_index", "\(index.name) (\(kind)) on \(index.columns.joined(separator: ", "))"
                        + (index.predicate.map { " where \($0.text)" } ?? ""))
        case .dropIndex(let name):
            return ("drop_index", name)
        case .addConstraint(let constraint):
            let what = switch constraint.kind {
            case .check(let expression): "CHECK (\(expression.text))"
            case .unique(let columns): "UNIQUE (\(columns.joined(separator: ", ")))"
            case .foreignKey(let columns, let references):
                "FOREIGN KEY (\(columns.joined(separator: ", "))) REFERENCES \(references.table)"
            }
            return ("add_constraint", "\(constraint.name) \(what)")
        case .dropConstraint(let name):
            return ("drop_constraint", name)
        case .setNotNull(let column, let up):
            return ("set_not_null", column + (up.map { ", NULLs get \($0.text)" } ?? ""))
        case .renameTable(let newName):
            return ("rename_table", "to \(newName); the old name stays the table's until contract, the new one a view")
        case .sql(let files):
            let all = [("expand", files.expand), ("revert", files.revert), ("contract", files.contract)].filter { !$0.1.isEmpty }
            return ("sql", all.map { "\($0.0) \($0.1.map(\.path).joined(separator: ", "))" }.joined(separator: "; "))
        }
    }

    /// `status_code smallint NOT NULL UNIQUE CHECK REFERENCES`.
    private static func column(_ column: DeclarativeOperation.ColumnDefinition) -> String {
        ([column.name, column.type] + [column.isNotNull ? "NOT NULL" : nil, column.isUnique ? "UNIQUE" : nil,
                                       column.check.map { "CHECK (\($0.text))" },
                                       column.references.map { "REFERENCES \($0.table)" },
                                       column.defaultValue.map { "DEFAULT \($0.text)" }].compactMap { $0 })
            .joined(separator: " ")
    }
}

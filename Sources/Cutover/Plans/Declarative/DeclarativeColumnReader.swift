/// The columns a declarative plan names, each in one part, and the references its
/// expressions and lists make to them, checked once the whole plan is read.
struct DeclarativeColumnReader {
    /// The part a column has in the plan.
    enum Role: Hashable {
        /// In the key.
        case key
        /// Read by expressions, never changed (`columns`).
        case read
        /// A legacy column, dropped at contract (`alter_column`'s `from`, `drop_column`).
        case legacy
        /// A modern column, added at expand (`add_column`, `alter_column`'s `to`).
        case modern
        /// An existing column made NOT NULL (`set_not_null`).
        case notNullTarget
    }

    /// Which columns a reference may name.
    enum Scope: Hashable {
        /// A new column's `up` or `default`: every column but the plan's modern ones, whose
        /// values are not there yet when an old writer's row is filled.
        case newColumn
        /// What lives on after contract: every column but the legacy ones.
        case afterContract
        /// Every column but the modern ones (a NULL's replacement before contract).
        case beforeContract
        /// The key and these columns (an `alter_column`'s own).
        case only([String])
        /// Every column the plan knows but this one (a dropped column's `down`).
        case allBut(String)
    }

    private var roles: [(name: String, role: Role)] = []
    private var pending: [(value: ManifestValue, columns: [String], scope: Scope)] = []

    /// Claims the column name here for `role`, refusing a name the plan gave another part.
    mutating func claim(_ value: ManifestValue, as role: Role) throws(ManifestFault) -> String {
        let name = try DeclarativePlanDecoder.identifier(value)
        guard !roles.contains(where: { $0.name == name }) else { throw value.fault(.repeatedColumn(name)) }
        roles.append((name, role))
        return name
    }

    /// Claims a column, or each of a list of `count` columns.
    mutating func claimList(_ value: ManifestValue, count: ClosedRange<Int>, as role: Role) throws(ManifestFault) -> [String] {
        var names: [String] = []
        for element in try DeclarativePlanDecoder.listOrOne(value, count: count, kind: .string) {
            names.append(try claim(element, as: role))
        }
        return names
    }

    /// A column, or a list of `count` columns, that must be known in `scope`.
    mutating func names(_ value: ManifestValue, count: ClosedRange<Int>, scope: Scope) throws(ManifestFault) -> [String] {
        var names: [String] = []
        for element in try DeclarativePlanDecoder.listOrOne(value, count: count, kind: .string) {
            let name = try DeclarativePlanDecoder.identifier(element)
            pending.append((element, [name], scope))
            names.append(name)
        }
        return names
    }

    /// The expression here, whose columns must be known in `scope`.
    mutating func expression(_ value: ManifestValue, scope: Scope) throws(ManifestFault) -> SQLExpression {
        let text = try value.text(length: PlanLimits.expressionLength, allowingLineBreaks: true)
        switch SQLExpression.read(text) {
        case .failure(let problem): throw value.fault(.invalidExpression(problem))
        case .success(let expression):
            pending.append((value, expression.columns, scope))
            return expression
        }
    }

    /// Refuses the first reference, in document order, to a column its scope does not know.
    func checkReferences() throws(ManifestFault) {
        for reference in pending {
            let known = allowed(in: reference.scope)
            if let unknown = reference.columns.first(where: { !known.contains($0) }) {
                throw reference.value.fault(.unknownColumn(unknown, known: known))
            }
        }
    }

    private func allowed(in scope: Scope) -> [String] {
        let named = roles.filter { entry in
            switch scope {
            case .newColumn, .beforeContract: entry.role != .modern
            case .afterContract: entry.role != .legacy
            case .only(let columns): entry.role == .key || columns.contains(entry.name)
            case .allBut(let column): entry.name != column
            }
        }
        return named.map(\.name)
    }
}

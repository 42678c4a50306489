/// Reads a format-2 manifest's root object into a ``DeclarativePlan``, refusing the first
/// thing that breaks a rule, in document order; expressions' column references are checked
/// last, once every operation has said which columns it names.
enum DeclarativePlanDecoder {
    private static let rootKeys = ["format", "name", "table", "key", "revision", "columns", "legacyApplicationPattern",
                                   "modernWriterWindow", "backfill", "operations", "checks", "statements"]
    private static let backfillKeys = ["batchSize", "niceRatio", "maxReplicaLag"] + PlanBackfillThrottle.keys
    private static let columnKeys = ["name", "type", "up", "default", "notNull", "unique", "check", "references"]
    private static let referenceKeys = ["table", "columns", "onDelete"]
    private static let onDeleteActions = ["no action", "restrict", "cascade", "set null", "set default"]
    private static let indexMethods = ["btree", "hash", "gist", "spgist", "gin", "brin"]
    private static let listCount = 1...PlanLimits.maximumListCount

    static func plan(from root: ManifestObject) throws(ManifestFault) -> DeclarativePlan {
        try PlanManifestDecoder.requireFormat(PlanLimits.declarativeFormat, of: root)
        try root.refuseUnknownKeys(allowed: rootKeys)
        var reader = DeclarativeColumnReader()
        let name = try root["name"].text(length: PlanLimits.nameLength)
        let table = try qualifiedName(root["table"])
        let key = try reader.claimList(root["key"], count: PlanLimits.keyColumnCount, as: .key)
        let revision = try root.optional("revision").map { value throws(ManifestFault) in
            let name = try identifier(value)
            if key.contains(name) { throw value.fault(.repeatedColumn(name)) }
            return name
        }
        let columns = try root.optional("columns").map { value throws(ManifestFault) in
            try reader.claimList(value, count: 1...PlanLimits.maximumListCount, as: .read)
        } ?? []
        let pattern = try root.optional("legacyApplicationPattern")?.text(length: PlanLimits.legacyApplicationPatternLength)
            ?? PlanLimits.defaultLegacyApplicationPattern
        let window = try root.optional("modernWriterWindow").map(PlanManifestDecoder.duration)
            ?? PlanLimits.defaultModernWriterWindow
        var batchSize = PlanLimits.defaultBatchSize
        var niceRatio = PlanLimits.defaultNiceRatio
        var replicaLag = PlanLimits.defaultMaximumReplicaLag
        var throttle = PlanBackfillThrottle.standard
        if let backfill = try root.optional("backfill")?.object() {
            try backfill.refuseUnknownKeys(allowed: backfillKeys)
            batchSize = try backfill.optional("batchSize")?.integer(in: PlanLimits.batchSize) ?? batchSize
            niceRatio = try backfill.optional("niceRatio")?.number(in: PlanLimits.niceRatio) ?? niceRatio
            replicaLag = try backfill.optional("maxReplicaLag").map(PlanManifestDecoder.duration) ?? replicaLag
            throttle = try PlanBackfillThrottle.decode(from: backfill)
        }
        var operations: [DeclarativeOperation] = []
        var files: Set<String> = []
        for entry in try root["operations"].array(count: listCount) {
            operations.append(try operation(entry, reader: &reader, files: &files))
        }
        try reader.checkReferences()
        if operations.count > 1, let index = operations.firstIndex(where: { if case .renameTable = $0 { true } else { false } }) {
            throw ManifestValue(path: root["operations"].path.index(index), value: nil).fault(.renameNotAlone(count: operations.count))
        }
        var plan = DeclarativePlan(name: name, table: table, key: key, revision: revision, columns: columns,
                                   legacyApplicationPattern: pattern,
                                   modernWriterWindow: window, batchSize: batchSize, niceRatio: niceRatio,
                                   maximumReplicaLag: replicaLag, operations: operations, checks: [:])
        plan.statements = try root.optional("statements").map(PlanManifestDecoder.statements) ?? []
        plan.backfillThrottle = throttle
        plan.declarationText = declarationText(of: root)
        guard let value = root.optional("checks") else { return plan }
        return plan.with(checks: try ownChecks(value, of: plan))
    }

    /// The plan's own checks, by step: each step's list as format 1 gives it, refused where a
    /// check repeats the name of one the compiler derives for that step or reads a file under
    /// `compiled/`.
    private static func ownChecks(_ value: ManifestValue, of plan: DeclarativePlan) throws(ManifestFault) -> [PlanStep.Kind: [PlanCheck]] {
        let object = try value.object()
        try object.refuseUnknownKeys(allowed: PlanStep.Kind.allCases.map(\.rawValue))
        let compiler = PlanCompiler(plan)
        var result: [PlanStep.Kind: [PlanCheck]] = [:]
        for kind in PlanStep.Kind.allCases {
            guard let list = object.optional(kind.rawValue) else { continue }
            let checks = try PlanManifestDecoder.checks(list)
            let derived = Set(compiler.derivedChecks(kind).map(\.name))
            for (index, check) in checks.enumerated() {
                let entry = list.path.index(index)
                if derived.contains(check.name) {
                    throw ManifestValue(path: entry.key("name"), value: nil).fault(.repeatedCheckName(check.name))
                }
                guard case .file(let path) = check.query else { continue }
                if path.hasPrefix("compiled/") { throw ManifestValue(path: entry.key("sqlFile"), value: nil).fault(.reservedPath(path)) }
            }
            result[kind] = checks
        }
        return result
    }

    private static func operation(_ entry: ManifestValue, reader: inout DeclarativeColumnReader,
                                  files: inout Set<String>) throws(ManifestFault) -> DeclarativeOperation {
        let object = try entry.object()
        guard object.members.count == 1, let kind = object.members.first?.name else {
            throw entry.fault(.operationKeyCount(found: object.members.count))
        }
        let body = object[kind]
        guard DeclarativeOperation.names.contains(kind) else { throw body.fault(.unknownOperation(kind)) }
        let fields = try body.object()
        switch kind {
        case "add_column":
            let column = try columnDefinition(fields, allowsUp: true, reader: &reader)
            if column.isNotNull, column.fill == nil { throw body.fault(.contractNeedsBackfill(column: column.name)) }
            return .addColumn(column)
        case "alter_column":
            return .alterColumn(try columnChange(fields, reader: &reader))
        case "drop_column":
            try fields.refuseUnknownKeys(allowed: ["name", "down", "default"])
            let name = try reader.claim(fields["name"], as: .legacy)
            let choices = ["down", "default"].filter(fields.has)
            guard choices.count == 1, let choice = choices.first else {
                throw body.fault(.exactlyOne(["down", "default"], found: choices.count))
            }
            return .dropColumn(name: name, down: try reader.expression(fields[choice], scope: .allBut(name)))
        case "create_index":
            try fields.refuseUnknownKeys(allowed: ["name", "columns", "unique", "method", "where"])
            let name = try identifier(fields["name"])
            let columns = try reader.names(fields["columns"], count: PlanLimits.keyColumnCount, scope: .afterContract)
            let method = try fields.optional("method").map { value throws(ManifestFault) in
                try choice(value, among: indexMethods)
            } ?? "btree"
            let predicate = try fields.optional("where").map { value throws(ManifestFault) in
                try reader.expression(value, scope: .afterContract)
            }
            return .createIndex(.init(name: name, columns: columns, isUnique: try fields.optional("unique")?.boolean() ?? false,
                                      method: method, predicate: predicate))
        case "drop_index":
            try fields.refuseUnknownKeys(allowed: ["name"])
            return .dropIndex(name: try identifier(fields["name"]))
        case "add_constraint":
            return .addConstraint(try constraint(fields, at: body, reader: &reader))
        case "drop_constraint":
            try fields.refuseUnknownKeys(allowed: ["name"])
            return .dropConstraint(name: try identifier(fields["name"]))
        case "rename_table":
            try fields.refuseUnknownKeys(allowed: ["to"])
            return .renameTable(to: try identifier(fields["to"]))
        case "set_not_null":
            try fields.refuseUnknownKeys(allowed: ["column", "up"])
            let column = try reader.claim(fields["column"], as: .notNullTarget)
            let up = try fields.optional("up").map { value throws(ManifestFault) in
                try reader.expression(value, scope: .beforeContract)
            }
            return .setNotNull(column: column, up: up)
        default:
            try fields.refuseUnknownKeys(allowed: ["expand", "revert", "contract"])
            guard ["expand", "revert", "contract"].contains(where: fields.has) else {
                throw body.fault(.exactlyOne(["expand", "revert", "contract"], found: 0))
            }
            func list(_ key: String, files: inout Set<String>) throws(ManifestFault) -> [PlanSQLFile] {
                guard let value = fields.optional(key) else { return [] }
                let entries = try PlanManifestDecoder.sqlFiles(value)
                for (index, file) in entries.enumerated() {
                    let element = ManifestValue(path: value.path.index(index), value: nil)
                    if file.path.hasPrefix("compiled/") { throw element.fault(.reservedPath(file.path)) }
                    if !files.insert(file.path).inserted { throw element.fault(.repeatedFile(file.path)) }
                }
                return entries
            }
            return .sql(.init(expand: try list("expand", files: &files), revert: try list("revert", files: &files),
                              contract: try list("contract", files: &files)))
        }
    }

    private static func columnDefinition(_ fields: ManifestObject, allowsUp: Bool,
                                         reader: inout DeclarativeColumnReader) throws(ManifestFault) -> DeclarativeOperation.ColumnDefinition {
        try fields.refuseUnknownKeys(allowed: allowsUp ? columnKeys : columnKeys.filter { $0 != "up" })
        let name = try reader.claim(fields["name"], as: .modern)
        let type = try typeName(fields["type"])
        let up = try fields.optional("up").map { value throws(ManifestFault) in try reader.expression(value, scope: .newColumn) }
        let defaultValue = try fields.optional("default").map { value throws(ManifestFault) in
            try reader.expression(value, scope: .newColumn)
        }
        let check = try fields.optional("check").map { value throws(ManifestFault) in
            try reader.expression(value, scope: .afterContract)
        }
        let references = try fields.optional("references").map { value throws(ManifestFault) in try foreignKey(value) }
        return .init(name: name, type: type, up: up, defaultValue: defaultValue,
                     isNotNull: try fields.optional("notNull")?.boolean() ?? false,
                     isUnique: try fields.optional("unique")?.boolean() ?? false, check: check, references: references)
    }

    private static func columnChange(_ fields: ManifestObject,
                                     reader: inout DeclarativeColumnReader) throws(ManifestFault) -> DeclarativeOperation.ColumnChange {
        try fields.refuseUnknownKeys(allowed: ["from", "to", "up", "down"])
        let from = try reader.claimList(fields["from"], count: PlanLimits.keyColumnCount, as: .legacy)
        var to: [DeclarativeOperation.ColumnDefinition] = []
        for value in try listOrOne(fields["to"], count: PlanLimits.keyColumnCount, kind: .object) {
            to.append(try columnDefinition(try value.object(), allowsUp: false, reader: &reader))
        }
        let names = from + to.map(\.name)
        let isRename = from.count == 1 && to.count == 1 && !fields.has("up") && !fields.has("down")
        if isRename {
            return .init(from: from, to: to, up: [SQLExpression(text: SQLName.identifier(from[0]), columns: [from[0]])],
                         down: [SQLExpression(text: SQLName.identifier(to[0].name), columns: [to[0].name])])
        }
        return .init(from: from, to: to,
                     up: try perColumn(fields["up"], columns: to.map(\.name), scope: .only(names), reader: &reader),
                     down: try perColumn(fields["down"], columns: from, scope: .only(names), reader: &reader))
    }

    /// One expression for one column, or an object giving one for each of several.
    private static func perColumn(_ value: ManifestValue, columns: [String], scope: DeclarativeColumnReader.Scope,
                                  reader: inout DeclarativeColumnReader) throws(ManifestFault) -> [SQLExpression] {
        if columns.count == 1 {
            return [try reader.expression(value, scope: scope)]
        }
        let object = try value.object()
        let given = object.members.map(\.name)
        guard given == columns || Set(given) == Set(columns) && given.count == columns.count else {
            throw value.fault(.expressionColumns(expected: columns, found: given))
        }
        var expressions: [SQLExpression] = []
        for column in columns { expressions.append(try reader.expression(object[column], scope: scope)) }
        return expressions
    }

    private static func constraint(_ fields: ManifestObject, at body: ManifestValue,
                                   reader: inout DeclarativeColumnReader) throws(ManifestFault) -> DeclarativeOperation.ConstraintDefinition {
        try fields.refuseUnknownKeys(allowed: ["name", "check", "unique", "foreignKey", "references"])
        let name = try identifier(fields["name"])
        let kinds = ["check", "unique", "foreignKey"].filter(fields.has)
        guard kinds.count == 1, let kind = kinds.first else {
            throw body.fault(.exactlyOne(["check", "unique", "foreignKey"], found: kinds.count))
        }
        switch kind {
        case "check":
            return .init(name: name, kind: .check(try reader.expression(fields["check"], scope: .afterContract)))
        case "unique":
            return .init(name: name, kind: .unique(try reader.names(fields["unique"], count: PlanLimits.keyColumnCount,
                                                                    scope: .afterContract)))
        default:
            let columns = try reader.names(fields["foreignKey"], count: PlanLimits.keyColumnCount, scope: .afterContract)
            return .init(name: name, kind: .foreignKey(columns: columns, references: try foreignKey(fields["references"])))
        }
    }

    private static func foreignKey(_ value: ManifestValue) throws(ManifestFault) -> DeclarativeOperation.ForeignKey {
        let fields = try value.object()
        try fields.refuseUnknownKeys(allowed: referenceKeys)
        var columns: [String] = []
        for column in try listOrOne(fields["columns"], count: PlanLimits.keyColumnCount, kind: .string) {
            columns.append(try identifier(column))
        }
        let onDelete = try fields.optional("onDelete").map { value throws(ManifestFault) in
            try choice(value, among: onDeleteActions).uppercased()
        }
        return .init(table: try qualifiedName(fields["table"]), columns: columns, onDelete: onDelete)
    }

    /// `name` or `schema.name` (``QualifiedName/init(planText:)``).
    static func qualifiedName(_ value: ManifestValue) throws(ManifestFault) -> QualifiedName {
        // Two parts of 63 bytes, each quoted with every byte a doubled quote, and the dot.
        let text = try value.text(length: 1...(2 * (2 * SQLName.maximumByteCount + 2) + 1), unit: .bytes)
        guard let name = QualifiedName(planText: text) else {
            throw value.fault(.notOneOf(text, allowed: [QualifiedName.planTextForms]))
        }
        return name
    }

    /// A column, index or constraint name: 1 to 63 bytes, no control characters.
    static func identifier(_ value: ManifestValue) throws(ManifestFault) -> String {
        try value.text(length: PlanLimits.identifierByteCount, unit: .bytes)
    }

    /// The list here, or a single value of `kind` as a list of one.
    static func listOrOne(_ value: ManifestValue, count: ClosedRange<Int>, kind: JSONKind) throws(ManifestFault) -> [ManifestValue] {
        let isList = try value.require([kind, .array]) { json -> Bool? in
            switch json {
            case .array: true
            case .string where kind == .string, .object where kind == .object: false
            default: nil
            }
        }
        return isList ? try value.array(count: count) : [value]
    }

    private static func typeName(_ value: ManifestValue) throws(ManifestFault) -> String {
        let text = try value.text(length: 1...256)
        switch SQLExpression.tokens(of: text) {
        case .failure(let problem): throw value.fault(.invalidExpression(problem))
        case .success(let tokens):
            let allowed = tokens.allSatisfy { token in
                switch token {
                case .word, .number: true
                case .punctuation(let character): character != ";"
                case .string, .symbol: false
                }
            }
            guard allowed, !tokens.isEmpty else { throw value.fault(.notOneOf(text, allowed: ["a type such as smallint, varchar(255) or public.mood"])) }
            return text
        }
    }

    private static func choice(_ value: ManifestValue, among allowed: [String]) throws(ManifestFault) -> String {
        let text = try value.string()
        guard allowed.contains(text.lowercased()) else { throw value.fault(.notOneOf(text, allowed: allowed)) }
        return text.lowercased()
    }
}

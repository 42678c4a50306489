extension PlanCompiler {
    /// A plan whose one operation is `rename_table`.
    ///
    /// Old writers keep the table under its old name, with every statement they could send
    /// (COPY and TRUNCATE included), until contract. From expand on, the new name is a simple
    /// view of the table, which PostgreSQL makes updatable (INSERT, UPDATE, DELETE, ON
    /// CONFLICT, RETURNING, FOR UPDATE), with the table's own grants for SELECT, INSERT,
    /// UPDATE and DELETE; from PostgreSQL 15 it runs with the caller's rights
    /// (`security_invoker`), so row-level security applies to it as to the table. Contract,
    /// in one transaction, drops the view and renames the table: the new name is the table's,
    /// and the old one is gone. No row is rewritten or copied, so there is nothing to backfill.
    func renameCompiled(to newName: String) -> CompiledPlan {
        let view = QualifiedName(schema: table.schema, name: newName).sql
        let createView = { (isInvoker: Bool) in
            CompiledStatement("CREATE VIEW \(view)\(isInvoker ? " WITH (security_invoker = true)" : "") AS SELECT * FROM \(table.sql)",
                              lock: .accessShare, work: .catalog, note: "a new view; reads and writes of the table go on")
        }
        let grantsBlock = """
            DECLARE
                granted record;
            BEGIN
                FOR granted IN
                    SELECT a.privilege_type, CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(r.rolname) END AS grantee
                      FROM pg_class AS c, aclexplode(c.relacl) AS a LEFT JOIN pg_roles AS r ON r.oid = a.grantee
                     WHERE c.oid = to_regclass(\(SQLName.literal(table.sql)))
                       AND a.privilege_type IN ('SELECT', 'INSERT', 'UPDATE', 'DELETE')
                LOOP
                    EXECUTE format('GRANT %s ON %s TO %s', granted.privilege_type, \(SQLName.literal(view)), granted.grantee);
                END LOOP;
            END
            """
        let grants = CompiledStatement("DO " + SQLName.dollarQuotedBlock(grantsBlock, tag: "grants"),
                                       lock: nil, work: .catalog, note: "the table's grants, given on the view")
        let purpose = "Expand: the new name, a view of the table that new writers use; old writers keep the table."
        let expand = [
            CompiledFile("compiled/expand.sql", purpose: purpose + "\nFrom PostgreSQL 15: the view runs with its caller's rights.",
                         statements: [createView(true), grants], serverVersion: ServerVersionRange(">= 15")),
            CompiledFile("compiled/expand_pg14.sql", purpose: purpose + "\nPostgreSQL 14: the view runs with its owner's rights.",
                         statements: [createView(false), grants], serverVersion: ServerVersionRange("< 15")),
        ]
        let expandRevert = CompiledFile("compiled/expand_revert.sql", purpose: "Revert expand: the view goes; the table never changed.",
                                        statements: [.init("DROP VIEW IF EXISTS \(view)", lock: nil, work: .catalog,
                                                           note: "ACCESS EXCLUSIVE on the view only")])
        let contract = CompiledFile("compiled/contract_drop.sql", purpose: """
            Contract, last file and point of no return, in one transaction: the view goes and the table takes
            its name. Old application versions, which use the old name, stop working here.
            """, statements: [.init("DROP VIEW IF EXISTS \(view)", lock: nil, work: .catalog, note: "ACCESS EXCLUSIVE on the view"),
                              .init("ALTER TABLE \(table.sql) RENAME TO \(SQLName.identifier(newName))", lock: .accessExclusive, work: .catalog)])
        let (batch, remaining, split, direct) = (backfillBatch(), backfillRemaining(), backfillSplit(), backfillDirectBatch())
        let checks = { (kind: PlanStep.Kind) in derivedChecks(kind) + (plan.checks[kind] ?? []) }
        let steps = [
            PlanStep(kind: .expand, apply: expand.map(\.planFile), revert: [expandRevert.planFile], backfill: nil, checks: checks(.expand)),
            PlanStep(kind: .switch, apply: [], revert: [], backfill: nil, checks: checks(.switch)),
            PlanStep(kind: .backfill, apply: [], revert: [], backfill: PlanBackfill(batch: batch.planFile, remaining: remaining.planFile,
                                                                                   batchSize: plan.batchSize, niceRatio: plan.niceRatio,
                                                                                   maximumReplicaLag: plan.maximumReplicaLag, throttle: plan.backfillThrottle,
                                                                                   split: split.planFile, directBatch: direct?.planFile),
                     checks: checks(.backfill)),
            PlanStep(kind: .contract, apply: [contract.planFile], revert: [], backfill: nil, checks: checks(.contract)),
        ]
        let migration = MigrationPlan(name: plan.name, table: table.sql, legacyApplicationPattern: plan.legacyApplicationPattern,
                                      modernWriterWindow: plan.modernWriterWindow, steps: steps, statements: plan.statements)
        return CompiledPlan(plan: migration, files: expand + [expandRevert, batch, remaining, split] + [direct].compactMap { $0 } + [contract],
                            tracksLegacyWrites: false,
                            legacyWritesNote: "a rename changes no data; old writers are found by their sessions' application_name",
                            expressionProbe: [], declaration: plan, syncFunction: nil, expandRevertChecks: [])
    }

    /// The new name of a plan whose one operation is `rename_table`.
    var renamedTo: String? {
        guard case .renameTable(let newName)? = plan.operations.first else { return nil }
        return newName
    }

    /// A rename's checks: before expand the table is there and the new name free (and, before
    /// PostgreSQL 15, no row-level security a view would bypass); after, the new name is the view.
    func renameChecks(_ kind: PlanStep.Kind, to newName: String) -> [PlanCheck] {
        let view = QualifiedName(schema: table.schema, name: newName).sql
        let regclass = "to_regclass(\(SQLName.literal(table.sql)))"
        guard kind == .expand else {
            return [PlanCheck(name: "the new name is the view",
                              query: .inline("SELECT count(*) FROM pg_class WHERE oid = to_regclass(\(SQLName.literal(view))) AND relkind = 'v'"),
                              expectation: .compare(.equal, .number("1")), message: "expand must have created the view \(view)")]
        }
        return [
            PlanCheck(name: "table present", query: .inline("SELECT \(regclass) IS NOT NULL"), expectation: .compare(.equal, .boolean(true)),
                      message: "the table \(table.sql) must exist before expand"),
            PlanCheck(name: "new name free", query: .inline("SELECT to_regclass(\(SQLName.literal(view))) IS NULL"),
                      expectation: .compare(.equal, .boolean(true)), message: "something is named \(view) already: drop or rename it first"),
            PlanCheck(name: "row-level security kept",
                      query: .inline("SELECT current_setting('server_version_num')::int >= 150000 OR NOT relrowsecurity FROM pg_class WHERE oid = \(regclass)"),
                      expectation: .compare(.equal, .boolean(true)),
                      message: "before PostgreSQL 15 a view runs with its owner's rights, which row-level security would not restrict"),
        ]
    }
}

import Cutover
import Testing

/// Splitting a plan's SQL into statements as PostgreSQL reads it.
@Suite("Splitting SQL into statements")
struct SQLStatementsTests {
    @Test("semicolons end statements only outside quotes, bodies and comments", arguments: [
        ("SELECT 1; SELECT 2;", ["SELECT 1", "SELECT 2"]),
        ("SELECT ';'; SELECT 'it''s; fine'", ["SELECT ';'", "SELECT 'it''s; fine'"]),
        (#"SELECT E'a\';b'; SELECT 2"#, [#"SELECT E'a\';b'"#, "SELECT 2"]),
        (#"SELECT 'a\'; SELECT 2"#, [#"SELECT 'a\'"#, "SELECT 2"]),
        (#"SELECT 1 AS "a;b"; SELECT 2"#, [#"SELECT 1 AS "a;b""#, "SELECT 2"]),
        ("CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1; $$; SELECT f();",
         ["CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1; $$", "SELECT f()"]),
        ("DO $body$ BEGIN PERFORM 1; PERFORM $$x;$$; END $body$; SELECT 3", ["DO $body$ BEGIN PERFORM 1; PERFORM $$x;$$; END $body$", "SELECT 3"]),
        ("SELECT $1::int; SELECT $2", ["SELECT $1::int", "SELECT $2"]),
        ("-- a comment; still one\nSELECT 1; /* a; /* nested; */ comment */ SELECT 2", ["SELECT 1", "SELECT 2"]),
        ("  ;; \n ", []),
    ])
    func split(sql: String, expected: [String]) {
        #expect(SQLStatements.split(sql) == expected)
    }
}

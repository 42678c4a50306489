#ifndef CUTOVER_CLIBPQ_SHIM_H
#define CUTOVER_CLIBPQ_SHIM_H

#include <libpq-fe.h>
#include <postgres_ext.h>

// The PG_DIAG_* field codes are character-literal macros ('C', 'M', ...). Swift imports
// integer-literal macros but not character-literal ones, so each is re-exported here as an
// int constant with the same value for PQresultErrorField.
static const int CUTOVER_PG_DIAG_SEVERITY = PG_DIAG_SEVERITY_NONLOCALIZED;
static const int CUTOVER_PG_DIAG_SQLSTATE = PG_DIAG_SQLSTATE;
static const int CUTOVER_PG_DIAG_MESSAGE_PRIMARY = PG_DIAG_MESSAGE_PRIMARY;
static const int CUTOVER_PG_DIAG_MESSAGE_DETAIL = PG_DIAG_MESSAGE_DETAIL;
static const int CUTOVER_PG_DIAG_MESSAGE_HINT = PG_DIAG_MESSAGE_HINT;
static const int CUTOVER_PG_DIAG_STATEMENT_POSITION = PG_DIAG_STATEMENT_POSITION;
static const int CUTOVER_PG_DIAG_CONTEXT = PG_DIAG_CONTEXT;
static const int CUTOVER_PG_DIAG_SCHEMA_NAME = PG_DIAG_SCHEMA_NAME;
static const int CUTOVER_PG_DIAG_TABLE_NAME = PG_DIAG_TABLE_NAME;
static const int CUTOVER_PG_DIAG_COLUMN_NAME = PG_DIAG_COLUMN_NAME;
static const int CUTOVER_PG_DIAG_DATATYPE_NAME = PG_DIAG_DATATYPE_NAME;
static const int CUTOVER_PG_DIAG_CONSTRAINT_NAME = PG_DIAG_CONSTRAINT_NAME;

// PQfreemem, PQfreeCancel and friends are imported fine; nothing else needs wrapping. libpq's
// notice processor takes a C function pointer with a void* context, which Swift can supply as a
// @convention(c) closure, so no trampoline is needed here either.

#endif

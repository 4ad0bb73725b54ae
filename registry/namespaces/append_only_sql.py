"""PostgreSQL triggers that refuse UPDATE and DELETE on history tables, so that
even raw SQL cannot rewrite the registry's history. Used by migrations."""

FUNCTION = """
CREATE OR REPLACE FUNCTION registry_refuse_history_change() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION '% rows are immutable history (%)', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;
"""


def forwards(tables):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        schema_editor.execute(FUNCTION, params=None)
        for table in tables:
            schema_editor.execute(
                f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION registry_refuse_history_change();"
            )

    return run


def backwards(tables):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        for table in tables:
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_append_only ON {table};")

    return run

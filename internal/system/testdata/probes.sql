-- What BI tools, ORMs and drivers' helpers send on connect and to list tables and columns
-- (JDBC, DBeaver, Metabase, Grafana, SQLAlchemy, pgx's LoadType), reduced to the parts that
-- differ: settings, version and identity functions, pg_type, information_schema.
SELECT version();
SHOW transaction_isolation;
SET extra_float_digits = 3;
SET application_name = 'probe';
SET DateStyle = 'ISO';
SET TimeZone = 'UTC';
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SET search_path = public;
SHOW standard_conforming_strings;
SHOW search_path;
SELECT current_database(), current_schema(), current_user, session_user;
SELECT current_setting('server_version_num'), current_setting('application_name');
SELECT current_schemas(true), current_schemas(false);
SELECT oid, typname FROM pg_type WHERE typname IN ('bool', 'int8', 'text', 'numeric', 'timestamptz', 'uuid', '_text') ORDER BY oid;
SELECT typname, typtype, typcategory, typelem, typarray FROM pg_catalog.pg_type WHERE oid = 1700;
SELECT t.oid, t.typname FROM pg_type t WHERE t.typname = 'numeric' AND pg_type_is_visible(t.oid);
SELECT nspname FROM pg_namespace WHERE nspname !~ '^pg_' AND nspname <> 'information_schema' ORDER BY 1;
SELECT schema_name FROM information_schema.schemata ORDER BY 1;
SELECT table_schema, table_name, table_type FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2;
SELECT column_name, data_type, is_nullable, column_default, numeric_precision, numeric_scale, datetime_precision, udt_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = 'balances' ORDER BY ordinal_position;
SELECT tc.constraint_name, kcu.column_name FROM information_schema.table_constraints tc JOIN information_schema.key_column_usage kcu ON tc.constraint_name = kcu.constraint_name WHERE tc.table_name = 'balances' AND tc.constraint_type = 'PRIMARY KEY';
SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY 1;
SELECT 'balances'::regclass::oid = (SELECT oid FROM pg_class WHERE relname = 'balances');
SELECT a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod), a.attnotnull FROM pg_catalog.pg_attribute a WHERE a.attrelid = 'public.balances'::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum;
SELECT i.relname, ix.indisprimary, pg_get_indexdef(ix.indexrelid) FROM pg_index ix JOIN pg_class i ON i.oid = ix.indexrelid WHERE ix.indrelid = 'balances'::regclass ORDER BY 1;
SELECT tablename, tableowner, hasindexes FROM pg_tables WHERE schemaname = 'public';
SELECT has_table_privilege('balances', 'SELECT'), has_schema_privilege('public', 'USAGE');
SELECT quote_ident('Balances'), quote_ident('balances'), quote_ident('a"b');
SELECT pg_encoding_to_char(encoding), datcollate FROM pg_database WHERE datname = current_database();
SELECT name, setting FROM pg_settings WHERE name IN ('application_name', 'server_version') ORDER BY 1;
SELECT obj_description('balances'::regclass, 'pg_class'), col_description('balances'::regclass, 1);
SELECT pg_size_pretty(10239), pg_size_pretty(10240), pg_size_pretty(1048576 * 3), pg_size_pretty(123456789012);
SELECT 'x'::regclass;
SELECT c.relname FROM pg_class c WHERE c.relname ~* '^BAL' AND c.relname !~ 'pkey$' ORDER BY 1;
SELECT 'd' = ANY('{a,d}'), 'z' = ANY('{a,NULL}'), 3 <> ALL('{1,2}');
SELECT 'pg_namespace'::regclass::oid, 'pg_catalog.pg_class'::regclass, 'information_schema.tables'::regclass, 'system.commits'::regclass;
SELECT n.oid, n.nspname, d.description FROM pg_catalog.pg_namespace n LEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid = n.oid AND d.objsubid = 0 AND d.classoid = 'pg_namespace'::regclass ORDER BY nspname;
SELECT c.relname, c.relkind, pg_table_is_visible(c.oid) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'system' AND c.relname LIKE 'c%' ORDER BY 1;
SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a WHERE a.attrelid = 'system.commits'::regclass ORDER BY a.attnum;
SELECT to_regclass('public.balances') = 'balances'::regclass, to_regclass('nosuch') IS NULL, to_regtype('numeric')::oid;
SELECT pg_is_in_recovery(), pg_get_serial_sequence('balances', 'n'), pg_client_encoding();
-- pgjdbc 42's DatabaseMetaData.getTables (tables and views), as DBeaver and Metabase call it
SELECT NULL AS TABLE_CAT, n.nspname AS TABLE_SCHEM, c.relname AS TABLE_NAME,  CASE n.nspname ~ '^pg_' OR n.nspname = 'information_schema'  WHEN true THEN CASE  WHEN n.nspname = 'pg_catalog' OR n.nspname = 'information_schema' THEN CASE c.relkind   WHEN 'r' THEN 'SYSTEM TABLE'   WHEN 'v' THEN 'SYSTEM VIEW'   WHEN 'i' THEN 'SYSTEM INDEX'   ELSE NULL   END  WHEN n.nspname = 'pg_toast' THEN CASE c.relkind   WHEN 'r' THEN 'SYSTEM TOAST TABLE'   WHEN 'i' THEN 'SYSTEM TOAST INDEX'   ELSE NULL   END  ELSE CASE c.relkind   WHEN 'r' THEN 'TEMPORARY TABLE'   WHEN 'p' THEN 'TEMPORARY TABLE'   WHEN 'i' THEN 'TEMPORARY INDEX'   WHEN 'S' THEN 'TEMPORARY SEQUENCE'   WHEN 'v' THEN 'TEMPORARY VIEW'   ELSE NULL   END  END  WHEN false THEN CASE c.relkind  WHEN 'r' THEN 'TABLE'  WHEN 'p' THEN 'PARTITIONED TABLE'  WHEN 'i' THEN 'INDEX'  WHEN 'P' then 'PARTITIONED INDEX'  WHEN 'S' THEN 'SEQUENCE'  WHEN 'v' THEN 'VIEW'  WHEN 'c' THEN 'TYPE'  WHEN 'f' THEN 'FOREIGN TABLE'  WHEN 'm' THEN 'MATERIALIZED VIEW'  ELSE NULL  END  ELSE NULL  END  AS TABLE_TYPE, d.description AS REMARKS,  '' as TYPE_CAT, '' as TYPE_SCHEM, '' as TYPE_NAME, '' AS SELF_REFERENCING_COL_NAME, '' AS REF_GENERATION  FROM pg_catalog.pg_namespace n, pg_catalog.pg_class c  LEFT JOIN pg_catalog.pg_description d ON (c.oid = d.objoid AND d.objsubid = 0  and d.classoid = 'pg_class'::regclass)  WHERE c.relnamespace = n.oid  AND c.relname LIKE '%' AND (false  OR ( c.relkind = 'r' AND n.nspname !~ '^pg_' AND n.nspname <> 'information_schema' )  OR ( c.relkind = 'v' AND n.nspname <> 'pg_catalog' AND n.nspname <> 'information_schema' ) ) ORDER BY TABLE_TYPE,TABLE_SCHEM,TABLE_NAME;

-- cod-server's database (docs/api.md). Migration 6: the specs stored before
-- train.precision, data.packing, model.embed_std and norm.gains existed say
-- what they ran. Applied by schema/migrate.c when PRAGMA user_version is
-- below 6.
-- A stored spec is complete, every default explicit, and a worker runs an
-- experiment from it; but its defaults then were fp32 master weights,
-- documents packed end to end, learned gains and an embedding drawn from
-- N(0, √0.4), where the embedding's default is now 0.02. Each field goes in
-- only where the spec lacks it, and only into a section that is an object
-- (a stored spec's are); the std is written as text so that it reads back
-- as √0.4 to the last bit (spec_upgrade in spec/spec_json.c writes the same
-- into a checkpoint's spec of that time).
UPDATE experiments SET spec = json_insert(spec, '$.model.embed_std', json('0.6324555320336759'))
    WHERE json_type(spec, '$.model') = 'object';
UPDATE experiments SET spec = json_insert(spec, '$.norm.gains', 'learned')
    WHERE json_type(spec, '$.norm') = 'object';
UPDATE experiments SET spec = json_insert(spec, '$.data.packing', 'stream')
    WHERE json_type(spec, '$.data') = 'object';
UPDATE experiments SET spec = json_insert(spec, '$.train.precision', 'mixed')
    WHERE json_type(spec, '$.train') = 'object';

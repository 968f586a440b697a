// 230 MB of JSON lines, one document a line at "text", on stdout: the
// input that tests/prep_parquet.sh and bench/prep_memory.sh read under a
// memory limit smaller than it. With a path argument, the number of lines
// written is saved there.
const base = "The committee of the city considers its budget for the coming year, line by line. ";
const w = process.stdout;
let i = 0, bytes = 0;
(function go() {
    while (bytes < 230e6) {
        const s = JSON.stringify({text: "Document " + i + ". " + base.repeat(10 + i % 30) + "It ends, " + i + "."}) + "\n";
        bytes += s.length; i++;
        if (!w.write(s)) return w.once("drain", go);
    }
    if (process.argv[2]) require("fs").writeFileSync(process.argv[2], String(i));
    w.end();
})();

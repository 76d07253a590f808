// `tsc --noEmit -p DIR` for many projects in one process: argv is the TypeScript package's folder, then the
// project folders; prints {folder: [diagnostic, ...]} as JSON. The projects share one app's dependencies
// (node_modules linked to the same folder), so a declaration file is parsed once and its SourceFile given to
// every program that reads it, as the language service's document registry does; the project's own sources
// are read fresh for each. What each program reports is what `tsc --noEmit -p DIR` reports for it.
"use strict";
const path = require("path");
const ts = require(process.argv[2]);
const shared = new Map();

function hostFor(options) {
  const host = ts.createCompilerHost(options);
  const read = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, onError, fresh) => {
    const real = ts.sys.realpath ? ts.sys.realpath(fileName) : fileName;
    const lib = real.includes(`${path.sep}node_modules${path.sep}`) && real.endsWith(".d.ts");
    if (!lib) return read(fileName, languageVersion, onError, fresh);
    const key = `${JSON.stringify(languageVersion)}|${real}`;
    if (!shared.has(key)) shared.set(key, read(fileName, languageVersion, onError, fresh));
    return shared.get(key);
  };
  return host;
}

const out = {};
for (const dir of process.argv.slice(3)) {
  const config = path.join(dir, "tsconfig.json");
  const problems = [];
  const parsed = ts.getParsedCommandLineOfConfigFile(config, { noEmit: true }, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => problems.push(d),
  });
  if (!parsed) {
    out[dir] = problems.map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
    continue;
  }
  const host = hostFor(parsed.options);
  const program = ts.createProgram({
    rootNames: parsed.fileNames,
    options: parsed.options,
    host,
    projectReferences: parsed.projectReferences,
  });
  const diagnostics = [...parsed.errors, ...ts.getPreEmitDiagnostics(program)];
  out[dir] = diagnostics.map((d) => ts.formatDiagnostic(d, host).trim());
}
process.stdout.write(JSON.stringify(out));

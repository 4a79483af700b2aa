/**
 * Size rule of the source tree: no file under src/ over 500 lines (generated ABIs, migrations and the ledger
 * simulator excepted) and no function over 150 lines. Prints each finding; exits 1 when there is any.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const MAX_FILE_LINES = 500;
const MAX_FUNCTION_LINES = 150;
const ROOT = join(import.meta.dirname, '..');
const FILE_RULE_EXEMPT = [/^src\/chain\/abi\//, /^src\/ledger-sim\//, /^src\/db\/migrations\//];

function* sourceFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sourceFiles(path);
    else if (name.endsWith('.ts')) yield path;
  }
}

function functionFindings(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const findings: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      if (lines > MAX_FUNCTION_LINES) {
        const name = node.name && ts.isIdentifier(node.name) ? node.name.text : '(anonymous)';
        findings.push(`${file}:${start + 1}: function ${name} has ${lines} lines (at most ${MAX_FUNCTION_LINES})`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return findings;
}

const findings: string[] = [];
for (const path of sourceFiles(join(ROOT, 'src'))) {
  const file = relative(ROOT, path);
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  const exempt = FILE_RULE_EXEMPT.some((rule) => rule.test(file));
  if (!exempt && lines > MAX_FILE_LINES) findings.push(`${file}: ${lines} lines (at most ${MAX_FILE_LINES})`);
  if (!file.startsWith('src/chain/abi/')) findings.push(...functionFindings(file, text));
}
for (const finding of findings) console.log(finding);
if (findings.length > 0) {
  console.log(`${findings.length} size finding(s)`);
  process.exit(1);
}
console.log('size rules: no findings');

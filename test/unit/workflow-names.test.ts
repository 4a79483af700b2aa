/**
 * Workflows, Updates, Signals and Queries are reached through their exported definitions, never by a name in a
 * string: a renamed or mistyped string compiles and fails only at run time. This scans src/ outside the workflow
 * definitions for the Temporal client and workflow calls given a string literal where the definition belongs.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

function* sourceFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sourceFiles(path);
    else if (name.endsWith('.ts')) yield path;
  }
}

/**
 * A call that takes a workflow or message definition, given a quoted name instead (an identifier in quotes;
 * generic arguments allowed). SQL text passed to a database client's query() is no identifier, so it does not match.
 */
const STRING_NAMED =
  /\b(?:start|signalWithStart|execute|executeUpdate|startUpdate|executeChild|startChild|signal|query)\s*(?:<[^>()]*>)?\(\s*(['"`])[A-Za-z_$][\w$]*\1|workflowType:\s*(['"`])[A-Za-z_$][\w$]*\2/g;

function stringNamedCalls(text: string): string[] {
  return [...text.matchAll(STRING_NAMED)].map((m) => m[0]);
}

describe('no workflow or message is named by a string outside its definition', () => {
  it('the pattern catches the forms it is meant to', () => {
    expect(stringNamedCalls(`client.workflow.start<typeof intentWorkflow>('intentWorkflow', {`)).toHaveLength(1);
    expect(stringNamedCalls(`handle.executeUpdate<R, [A]>('submitSignature', { args })`)).toHaveLength(1);
    expect(stringNamedCalls(`handle.signal("ledgerChanged")`)).toHaveLength(1);
    expect(stringNamedCalls(`workflowType: 'maintenanceWorkflow',`)).toHaveLength(1);
    expect(stringNamedCalls(`client.workflow.start(intentWorkflow, { workflowId })`)).toHaveLength(0);
    expect(stringNamedCalls(`workflowType: maintenanceWorkflow.name,`)).toHaveLength(0);
    expect(stringNamedCalls(`await client.query('select pg_advisory_lock($1)', [key])`)).toHaveLength(0);
  });

  it('src/ outside src/workflows has none', () => {
    const found: string[] = [];
    for (const path of sourceFiles(join(ROOT, 'src'))) {
      const file = relative(ROOT, path);
      if (file.startsWith('src/workflows/')) continue;
      for (const call of stringNamedCalls(readFileSync(path, 'utf8'))) found.push(`${file}: ${call}`);
    }
    expect(found).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import { resolve } from 'node:path';
import { devServerArgs, loadTemporalProfile, withDataDir } from '../../src/temporal/profile.js';
import { SEARCH_ATTRIBUTE_KEYS } from '../../src/workflows/search-attributes.js';

describe('temporal-dev.yml', () => {
  const profile = loadTemporalProfile();

  it('registers every search attribute the workflows set, with the same type', () => {
    const cliType: Record<string, string> = { KEYWORD: 'Keyword', KEYWORD_LIST: 'KeywordList' };
    const expected = Object.fromEntries(SEARCH_ATTRIBUTE_KEYS.map((k) => [k.name, cliType[k.type] ?? k.type]));
    expect(profile.searchAttributes).toEqual(expected);
    expect(Object.keys(expected).sort()).toEqual(['BatchId', 'BatchIntents', 'IdentityId', 'IntentId', 'OrgId', 'Stage']);
  });

  it('becomes the start-dev argv', () => {
    const args = devServerArgs(profile);
    expect(args.slice(0, 2)).toEqual(['server', 'start-dev']);
    expect(args.join(' ')).toContain(`--port ${profile.port} `);
    expect(args.join(' ')).toContain(`--ui-port ${profile.uiPort}`);
    expect(args.join(' ')).toContain('--search-attribute Stage=Keyword');
    const headless = devServerArgs({ ...profile, dbFilename: null }, { headless: true });
    expect(headless).toContain('--headless');
    expect(headless).not.toContain('--ui-port');
    expect(headless).not.toContain('--db-filename');
  });

  it('keeps the Temporal database under DATA_DIR', () => {
    // a fresh DATA_DIR is a fresh Temporal: the default profile's file moves with DATA_DIR
    expect(devServerArgs(withDataDir(profile, '/tmp/gw-a')).join(' ')).toContain('--db-filename /tmp/gw-a/temporal/dev.sqlite');
    expect(withDataDir(profile, '.data').dbFilename).toBe(resolve('.data/temporal/dev.sqlite'));
    expect(withDataDir({ ...profile, dbFilename: '/abs/t.sqlite' }, '/tmp/gw-a').dbFilename).toBe('/abs/t.sqlite');
    expect(withDataDir({ ...profile, dbFilename: null }, '/tmp/gw-a').dbFilename).toBeNull();
  });
});

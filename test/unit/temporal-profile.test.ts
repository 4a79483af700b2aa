import { describe, expect, it } from 'vitest';
import { devServerArgs, loadTemporalProfile } from '../../src/temporal/profile.js';
import { SEARCH_ATTRIBUTE_KEYS } from '../../src/workflows/search-attributes.js';

describe('temporal-dev.yml', () => {
  const profile = loadTemporalProfile();

  it('registers every search attribute the workflows set, with the same type', () => {
    const expected = Object.fromEntries(
      SEARCH_ATTRIBUTE_KEYS.map((k) => [k.name, k.type === 'KEYWORD' ? 'Keyword' : k.type]),
    );
    expect(profile.searchAttributes).toEqual(expected);
    expect(Object.keys(expected).sort()).toEqual(['IdentityId', 'IntentId', 'OrgId', 'Stage']);
  });

  it('becomes the start-dev argv', () => {
    const args = devServerArgs(profile);
    expect(args.slice(0, 2)).toEqual(['server', 'start-dev']);
    expect(args.join(' ')).toContain(`--port ${profile.port} `);
    expect(args.join(' ')).toContain(`--ui-port ${profile.uiPort}`);
    expect(args.join(' ')).toContain('--search-attribute Stage=Keyword');
    expect(args.join(' ')).toContain('--db-filename .data/temporal/dev.sqlite');
    const headless = devServerArgs({ ...profile, dbFilename: null }, { headless: true });
    expect(headless).toContain('--headless');
    expect(headless).not.toContain('--ui-port');
    expect(headless).not.toContain('--db-filename');
  });
});

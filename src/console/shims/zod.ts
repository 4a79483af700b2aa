/**
 * Browser stand-in for 'zod' in the console bundle, for src/proof/bundle.ts (the bundle schema the verifier checks):
 * the constructors it calls, imported by name so the bundle leaves out what it never uses (zod's namespace object
 * carries every locale and the JSON-schema tools, about 300 KB).
 */
import { array, boolean, number, strictObject, string, unknown } from 'zod';

export const z = { array, boolean, number, strictObject, string, unknown };

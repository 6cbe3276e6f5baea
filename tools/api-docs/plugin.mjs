/**
 * The TypeDoc plugin of `npm run docs` (loaded by the root typedoc.json). For each package:
 * - the entry points are its public faces, `src/index.ts` and, where there is one, `src/compat.ts`
 *   or `src/flat.ts` (index first: a class both export is documented where the idiomatic face has it);
 * - `@retval` (bufmgr's JSDoc names return values with it) is a known block tag.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'

export function load(app) {
  app.options.addReader({
    name: 'amlapi-packages',
    order: 10_000,
    supportsPackages: true,
    read(options, _logger, cwd) {
      if (options.packageDir === undefined) return
      const entries = ['src/index.ts', 'src/compat.ts', 'src/flat.ts'].filter((f) => existsSync(join(cwd, f)))
      options.setValue('entryPoints', entries, cwd)
      const tags = options.getValue('blockTags')
      if (!tags.includes('@retval')) options.setValue('blockTags', [...tags, '@retval'])
    },
  })
}

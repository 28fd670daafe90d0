/**
 * The app's editable files as a code question shows them (docs/builders.md "Code questions"): the first page
 * inline in the question's prompt, the others read with `svc_get_session`'s `questionFilesPage`.
 * Hosts cut or divert tool results past about 50,000 characters (Claude Code saves them to a
 * file), and a session result carries the prompt twice (`structuredContent` and its JSON text),
 * so a page holds a bounded number of characters. The builder (for the prompt) and the service
 * (for a page read) page the same files with this one function, from the workspace on disk, which
 * does not change while the question waits.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { PagedFile } from '../builder-module.js';
import { linkOnPath, pathProblem, type FilePaging } from './code-answer.js';

/** Default paging: with the prompt's own text, a session result stays under 50,000 characters. */
export const DEFAULT_FILE_PAGING: FilePaging = { first: 12_000, page: 18_000 };

/** Most files listed from a workspace. */
const MAX_FILES = 1000;

/**
 * The editable files of the app in `root` (`App.tsx`, `src/**` `.ts`/`.tsx`/`.json`, never through
 * a link), App.tsx first, then by path.
 */
async function editableFiles(root: string): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string) => {
    const entries = await readdir(join(root, dir), { withFileTypes: true }).catch(() => []);
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (found.length >= MAX_FILES) return;
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile() && pathProblem(path) === null && linkOnPath(root, path) === null) found.push(path);
    }
  };
  if (pathProblem('App.tsx') === null && linkOnPath(root, 'App.tsx') === null) {
    const app = await readFile(join(root, 'App.tsx'), 'utf8')
      .then(() => true)
      .catch(() => false);
    if (app) found.push('App.tsx');
  }
  await walk('src');
  return found;
}

/**
 * The pages of the editable files of `root`: files in `editableFiles` order, packed whole into
 * pages of at most `paging.first` (page 1) or `paging.page` characters; a file longer than a page
 * gets a page of its own, cut to it (`cut: true`).
 * @returns at least one page (possibly empty).
 */
export async function pageFiles(root: string, paging: FilePaging): Promise<PagedFile[][]> {
  const pages: PagedFile[][] = [[]];
  let left = paging.first;
  const newPage = () => {
    pages.push([]);
    left = paging.page;
  };
  for (const path of await editableFiles(root)) {
    const text = await readFile(join(root, path), 'utf8').catch(() => null);
    if (text === null) continue;
    if (text.length > left && pages.at(-1)!.length > 0) newPage();
    // Page 1 is smaller than the others: a file too long for it starts page 2.
    if (text.length > left && pages.length === 1) newPage();
    if (text.length > left) {
      pages.at(-1)!.push({ path, content: text.slice(0, left), cut: true });
      newPage();
      continue;
    }
    pages.at(-1)!.push({ path, content: text });
    left -= text.length;
  }
  while (pages.length > 1 && pages.at(-1)!.length === 0) pages.pop();
  return pages;
}

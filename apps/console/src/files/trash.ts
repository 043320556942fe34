// Deleting moves files to the trash, so it asks nothing first: it says what it did, with an Undo that
// brings them back ("Moved to trash · Undo").
import { errorText } from '../api';
import { showToast } from '../toast';
import { countWords } from '../ui';
import { bulk, restoreFile, type Outcome } from './actions';
import { filesChanged } from './changes';

/** "notes.txt", "3 files". */
const what = (count: number, name?: string) => (count === 1 && name ? name : countWords(count));

/**
 * Moves the files to the trash and offers to undo it; `afterUndo` runs once they are back. The outcome
 * says which could not be moved (their reasons in the toast instead of the undo).
 */
export async function moveToTrash(fileIds: string[], name: string | undefined, afterUndo: () => void): Promise<Outcome> {
  const outcome = await bulk(fileIds, 'delete');
  filesChanged();
  const moved = outcome.done;
  if (moved.length === 0) {
    showToast({ message: `Nothing was moved to the trash: ${outcome.failed[0]?.message ?? 'the files are gone'}` });
    return outcome;
  }
  const undo = async () => {
    try {
      await Promise.all(moved.map((fileId) => restoreFile(fileId)));
      showToast({ message: `${what(moved.length, name)} ${moved.length === 1 ? 'is' : 'are'} back` });
    } catch (error) {
      showToast({ message: errorText(error) });
    }
    filesChanged();
    afterUndo();
  };
  const failed = outcome.failed.length ? ` (${countWords(outcome.failed.length)} could not be)` : '';
  showToast({ message: `Moved ${what(moved.length, name)} to trash${failed}`, action: { label: 'Undo', run: () => void undo() } });
  return outcome;
}

/** The services tools call into (docs/architecture.md: tools never touch SQL). */
import type { Logger } from '../logger.js';
import type { ProjectService } from '../services/project-service.js';
import type { WorkflowService } from '../services/workflow-service.js';
import type { PreviewScreenshots } from '../services/preview-screenshots.js';

/** The services every tool handler receives. */
export interface ToolServices {
  projects: ProjectService;
  workflows: WorkflowService;
  /** Preview screenshots (`svc_get_session` with `screenshot: true`). */
  screenshots: Pick<PreviewScreenshots, 'latest'>;
  /** For operator-facing events of a tool (never a token). Optional: tests may leave it out. */
  logger?: Logger;
}

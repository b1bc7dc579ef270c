import type { Logger } from 'pino';
import { capMaxTokens, resolveModelSpecs, type ModelSpecs } from '../config-models.js';
import type { Config } from '../config.js';

/** The resolved models and the `max_tokens` every call asks for. */
export interface Models extends ModelSpecs {
  /** `model.maxTokens`, capped at the primary's and fallback's `maxOutputTokens`. */
  maxTokens: number;
}

/**
 * Start-up step: resolves `models.<name>` with `model.name` and `model.fallback` (entry, then the
 * known table, then the generic default) and caps `model.maxTokens` at their `maxOutputTokens`,
 * with a `model_max_tokens_capped` warning when it lowers it.
 */
export function buildModels(cfg: Readonly<Config>, log: Logger): Models {
  const specs = resolveModelSpecs(cfg.models, cfg.model.name, cfg.model.fallback);
  const cap = capMaxTokens(cfg.model.maxTokens, specs.lookup, cfg.model.name, cfg.model.fallback);
  if (cap.cappedBy) {
    const { model, maxOutputTokens, configured } = cap.cappedBy;
    log.warn(
      { event: 'model_max_tokens_capped', model, configured, maxOutputTokens },
      `model.maxTokens ${configured} is more than models.${model}.maxOutputTokens (${maxOutputTokens}): calls ask for ${maxOutputTokens}`,
    );
  }
  return { ...specs, maxTokens: cap.maxTokens };
}

import { Router } from 'express';
import { parseInput } from '@pds/http';
import { callerOf, tenantOf } from '../context';
import { newUserSchema, userView, type UserService } from './service';

/** Owner-only account management: /users/user (as the original system's clients call it). */
export function userRoutes(users: UserService): Router {
  const router = Router();

  router.post('/users/user', async (req, res) => {
    const user = await users.create(tenantOf(req), callerOf(req), parseInput(newUserSchema, req.body ?? {}));
    res.status(201).json(userView(user));
  });

  router.get('/users/user', async (req, res) => {
    res.json((await users.list(tenantOf(req), callerOf(req))).map(userView));
  });

  for (const [action, enabled] of [
    ['disable', false],
    ['enable', true],
  ] as const) {
    router.put(`/users/user/:userId/${action}`, async (req, res) => {
      res.json(userView(await users.setEnabled(tenantOf(req), callerOf(req), { userId: String(req.params.userId), enabled })));
    });
  }

  router.delete('/users/user/:userId', async (req, res) => {
    const userId = String(req.params.userId);
    await users.delete(tenantOf(req), callerOf(req), { userId });
    res.json({ message: `User ${userId} deleted` });
  });

  return router;
}

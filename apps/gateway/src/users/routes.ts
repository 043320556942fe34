import { Router } from 'express';
import { parseInput } from '@pds/http';
import { ownerOf, tenantOf } from '../context';
import { newUserSchema, userView, type UserService } from './service';

/** Owner-only account management: /users/user (as the original system's clients call it). */
export function userRoutes(users: UserService): Router {
  const router = Router();

  router.post('/users/user', async (req, res) => {
    ownerOf(req);
    const input = parseInput(newUserSchema, req.body ?? {});
    const user = await users.create(tenantOf(req).instance.id, input);
    res.status(201).json(userView(user));
  });

  router.get('/users/user', async (req, res) => {
    ownerOf(req);
    res.json((await users.list(tenantOf(req).instance.id)).map(userView));
  });

  for (const [action, enabled] of [['disable', false], ['enable', true]] as const) {
    router.put(`/users/user/:userId/${action}`, async (req, res) => {
      ownerOf(req);
      res.json(userView(await users.setEnabled(tenantOf(req).instance.id, req.params.userId as string, enabled)));
    });
  }

  router.delete('/users/user/:userId', async (req, res) => {
    ownerOf(req);
    await users.delete(tenantOf(req).instance.id, req.params.userId as string);
    res.json({ message: `User ${req.params.userId} deleted` });
  });

  return router;
}

"""yenchenlin's nerf-pytorch as run_nerf.py and run_nerf_helpers.py write it, with the blender
download replaced by a few NumPy views of a coloured scene: the Embedder (2.**torch.linspace
frequency bands, lambdas over torch.sin/torch.cos, torch.cat), the NeRF MLP (torch.split of points
and view directions, the skip connection, use_viewdirs heads), get_rays (torch.meshgrid without
indexing=, .t(), the camera rotation by broadcasting dirs[..., np.newaxis, :] * c2w[:3, :3],
c2w[:3, -1].expand(rays_d.shape)), ndc_rays, batchify/run_network/batchify_rays/render,
render_rays with stratified sampling (torch.rand after torch.manual_seed, or the `pytest` draws of
np.random), raw2outputs (torch.Tensor([1e10]).expand, torch.norm, torch.cumprod of the
transmittance), hierarchical sampling in sample_pdf (torch.cumsum, torch.searchsorted(right=True),
torch.max/min of index tensors, torch.gather of expanded tensors, torch.where), torch.sort of the
merged samples, z_std through torch.std(unbiased=False), img2mse and mse2psnr
(torch.log(torch.Tensor([10.]))), the train loop's precrop coordinates from torch.meshgrid and
np.random.choice, the ray batching with torch.randperm, the lrate decay written into
param_groups, and render_path under torch.no_grad() with to8b."""
import numpy as np
import pytest

from prog_helpers import compare_program, numpy_of, start_from


def nerf_program(torch, init=None, iters=4, use_batching=False, pytest_draws=False, ndc=False):
    nn = torch.nn
    F = torch.nn.functional
    torch.manual_seed(0)
    np.random.seed(0)

    # ---- run_nerf_helpers.py ----
    img2mse = lambda x, y: torch.mean((x - y) ** 2)
    mse2psnr = lambda x: -10. * torch.log(x) / torch.log(torch.Tensor([10.]))
    to8b = lambda x: (255 * np.clip(x, 0, 1)).astype(np.uint8)

    class Embedder:
        def __init__(self, **kwargs):
            self.kwargs = kwargs
            self.create_embedding_fn()

        def create_embedding_fn(self):
            embed_fns = []
            d = self.kwargs['input_dims']
            out_dim = 0
            if self.kwargs['include_input']:
                embed_fns.append(lambda x: x)
                out_dim += d
            max_freq = self.kwargs['max_freq_log2']
            N_freqs = self.kwargs['num_freqs']
            if self.kwargs['log_sampling']:
                freq_bands = 2.**torch.linspace(0., max_freq, steps=N_freqs)
            else:
                freq_bands = torch.linspace(2.**0., 2.**max_freq, steps=N_freqs)
            for freq in freq_bands:
                for p_fn in self.kwargs['periodic_fns']:
                    embed_fns.append(lambda x, p_fn=p_fn, freq=freq: p_fn(x * freq))
                    out_dim += d
            self.embed_fns = embed_fns
            self.out_dim = out_dim

        def embed(self, inputs):
            return torch.cat([fn(inputs) for fn in self.embed_fns], -1)

    def get_embedder(multires, i=0):
        if i == -1:
            return nn.Identity(), 3
        embed_kwargs = {
            'include_input': True,
            'input_dims': 3,
            'max_freq_log2': multires - 1,
            'num_freqs': multires,
            'log_sampling': True,
            'periodic_fns': [torch.sin, torch.cos],
        }
        embedder_obj = Embedder(**embed_kwargs)
        embed = lambda x, eo=embedder_obj: eo.embed(x)
        return embed, embedder_obj.out_dim

    class NeRF(nn.Module):
        def __init__(self, D=8, W=256, input_ch=3, input_ch_views=3, output_ch=4, skips=[4], use_viewdirs=False):
            super(NeRF, self).__init__()
            self.D = D
            self.W = W
            self.input_ch = input_ch
            self.input_ch_views = input_ch_views
            self.skips = skips
            self.use_viewdirs = use_viewdirs
            self.pts_linears = nn.ModuleList(
                [nn.Linear(input_ch, W)] + [nn.Linear(W, W) if i not in self.skips else nn.Linear(W + input_ch, W)
                                            for i in range(D - 1)])
            self.views_linears = nn.ModuleList([nn.Linear(input_ch_views + W, W // 2)])
            if use_viewdirs:
                self.feature_linear = nn.Linear(W, W)
                self.alpha_linear = nn.Linear(W, 1)
                self.rgb_linear = nn.Linear(W // 2, 3)
            else:
                self.output_linear = nn.Linear(W, output_ch)

        def forward(self, x):
            input_pts, input_views = torch.split(x, [self.input_ch, self.input_ch_views], dim=-1)
            h = input_pts
            for i, l in enumerate(self.pts_linears):
                h = self.pts_linears[i](h)
                h = F.relu(h)
                if i in self.skips:
                    h = torch.cat([input_pts, h], -1)
            if self.use_viewdirs:
                alpha = self.alpha_linear(h)
                feature = self.feature_linear(h)
                h = torch.cat([feature, input_views], -1)
                for i, l in enumerate(self.views_linears):
                    h = self.views_linears[i](h)
                    h = F.relu(h)
                rgb = self.rgb_linear(h)
                outputs = torch.cat([rgb, alpha], -1)
            else:
                outputs = self.output_linear(h)
            return outputs

    def get_rays(H, W, K, c2w):
        i, j = torch.meshgrid(torch.linspace(0, W - 1, W), torch.linspace(0, H - 1, H))  # pytorch's meshgrid has indexing='ij'
        i = i.t()
        j = j.t()
        dirs = torch.stack([(i - K[0][2]) / K[0][0], -(j - K[1][2]) / K[1][1], -torch.ones_like(i)], -1)
        # Rotate ray directions from camera frame to the world frame
        rays_d = torch.sum(dirs[..., np.newaxis, :] * c2w[:3, :3], -1)  # dot product, equals to: [c2w.dot(dir) for dir in dirs]
        # Translate camera frame's origin to the world frame. It is the origin of all rays.
        rays_o = c2w[:3, -1].expand(rays_d.shape)
        return rays_o, rays_d

    def get_rays_np(H, W, K, c2w):
        i, j = np.meshgrid(np.arange(W, dtype=np.float32), np.arange(H, dtype=np.float32), indexing='xy')
        dirs = np.stack([(i - K[0][2]) / K[0][0], -(j - K[1][2]) / K[1][1], -np.ones_like(i)], -1)
        rays_d = np.sum(dirs[..., np.newaxis, :] * c2w[:3, :3], -1)
        rays_o = np.broadcast_to(c2w[:3, -1], np.shape(rays_d))
        return rays_o, rays_d

    def ndc_rays(H, W, focal, near, rays_o, rays_d):
        # Shift ray origins to near plane
        t = -(near + rays_o[..., 2]) / rays_d[..., 2]
        rays_o = rays_o + t[..., None] * rays_d
        # Projection
        o0 = -1. / (W / (2. * focal)) * rays_o[..., 0] / rays_o[..., 2]
        o1 = -1. / (H / (2. * focal)) * rays_o[..., 1] / rays_o[..., 2]
        o2 = 1. + 2. * near / rays_o[..., 2]
        d0 = -1. / (W / (2. * focal)) * (rays_d[..., 0] / rays_d[..., 2] - rays_o[..., 0] / rays_o[..., 2])
        d1 = -1. / (H / (2. * focal)) * (rays_d[..., 1] / rays_d[..., 2] - rays_o[..., 1] / rays_o[..., 2])
        d2 = -2. * near / rays_o[..., 2]
        rays_o = torch.stack([o0, o1, o2], -1)
        rays_d = torch.stack([d0, d1, d2], -1)
        return rays_o, rays_d

    # Hierarchical sampling (section 5.2)
    def sample_pdf(bins, weights, N_samples, det=False, pytest=False):
        # Get pdf
        weights = weights + 1e-5  # prevent nans
        pdf = weights / torch.sum(weights, -1, keepdim=True)
        cdf = torch.cumsum(pdf, -1)
        cdf = torch.cat([torch.zeros_like(cdf[..., :1]), cdf], -1)  # (batch, len(bins))
        # Take uniform samples
        if det:
            u = torch.linspace(0., 1., steps=N_samples)
            u = u.expand(list(cdf.shape[:-1]) + [N_samples])
        else:
            u = torch.rand(list(cdf.shape[:-1]) + [N_samples])
        # Pytest, overwrite u with numpy's fixed random numbers
        if pytest:
            np.random.seed(0)
            new_shape = list(cdf.shape[:-1]) + [N_samples]
            if det:
                u = np.linspace(0., 1., N_samples)
                u = np.broadcast_to(u, new_shape)
            else:
                u = np.random.rand(*new_shape)
            u = torch.Tensor(u)
        # Invert CDF
        u = u.contiguous()
        inds = torch.searchsorted(cdf, u, right=True)
        below = torch.max(torch.zeros_like(inds - 1), inds - 1)
        above = torch.min((cdf.shape[-1] - 1) * torch.ones_like(inds), inds)
        inds_g = torch.stack([below, above], -1)  # (batch, N_samples, 2)
        matched_shape = [inds_g.shape[0], inds_g.shape[1], cdf.shape[-1]]
        cdf_g = torch.gather(cdf.unsqueeze(1).expand(matched_shape), 2, inds_g)
        bins_g = torch.gather(bins.unsqueeze(1).expand(matched_shape), 2, inds_g)
        denom = (cdf_g[..., 1] - cdf_g[..., 0])
        denom = torch.where(denom < 1e-5, torch.ones_like(denom), denom)
        t = (u - cdf_g[..., 0]) / denom
        samples = bins_g[..., 0] + t * (bins_g[..., 1] - bins_g[..., 0])
        return samples

    # ---- run_nerf.py ----
    def batchify(fn, chunk):
        if chunk is None:
            return fn

        def ret(inputs):
            return torch.cat([fn(inputs[i:i + chunk]) for i in range(0, inputs.shape[0], chunk)], 0)
        return ret

    def run_network(inputs, viewdirs, fn, embed_fn, embeddirs_fn, netchunk=1024 * 64):
        inputs_flat = torch.reshape(inputs, [-1, inputs.shape[-1]])
        embedded = embed_fn(inputs_flat)
        if viewdirs is not None:
            input_dirs = viewdirs[:, None].expand(inputs.shape)
            input_dirs_flat = torch.reshape(input_dirs, [-1, input_dirs.shape[-1]])
            embedded_dirs = embeddirs_fn(input_dirs_flat)
            embedded = torch.cat([embedded, embedded_dirs], -1)
        outputs_flat = batchify(fn, netchunk)(embedded)
        outputs = torch.reshape(outputs_flat, list(inputs.shape[:-1]) + [outputs_flat.shape[-1]])
        return outputs

    def batchify_rays(rays_flat, chunk=1024 * 32, **kwargs):
        all_ret = {}
        for i in range(0, rays_flat.shape[0], chunk):
            ret = render_rays(rays_flat[i:i + chunk], **kwargs)
            for k in ret:
                if k not in all_ret:
                    all_ret[k] = []
                all_ret[k].append(ret[k])
        all_ret = {k: torch.cat(all_ret[k], 0) for k in all_ret}
        return all_ret

    def render(H, W, K, chunk=1024 * 32, rays=None, c2w=None, ndc=True, near=0., far=1., use_viewdirs=False,
               c2w_staticcam=None, **kwargs):
        if c2w is not None:
            # special case to render full image
            rays_o, rays_d = get_rays(H, W, K, c2w)
        else:
            # use provided ray batch
            rays_o, rays_d = rays
        if use_viewdirs:
            # provide ray directions as input
            viewdirs = rays_d
            if c2w_staticcam is not None:
                rays_o, rays_d = get_rays(H, W, K, c2w_staticcam)
            viewdirs = viewdirs / torch.norm(viewdirs, dim=-1, keepdim=True)
            viewdirs = torch.reshape(viewdirs, [-1, 3]).float()
        sh = rays_d.shape  # [..., 3]
        if ndc:
            # for forward facing scenes
            rays_o, rays_d = ndc_rays(H, W, K[0][0], 1., rays_o, rays_d)
        # Create ray batch
        rays_o = torch.reshape(rays_o, [-1, 3]).float()
        rays_d = torch.reshape(rays_d, [-1, 3]).float()
        near, far = near * torch.ones_like(rays_d[..., :1]), far * torch.ones_like(rays_d[..., :1])
        rays = torch.cat([rays_o, rays_d, near, far], -1)
        if use_viewdirs:
            rays = torch.cat([rays, viewdirs], -1)
        # Render and reshape
        all_ret = batchify_rays(rays, chunk, **kwargs)
        for k in all_ret:
            k_sh = list(sh[:-1]) + list(all_ret[k].shape[1:])
            all_ret[k] = torch.reshape(all_ret[k], k_sh)
        k_extract = ['rgb_map', 'disp_map', 'acc_map']
        ret_list = [all_ret[k] for k in k_extract]
        ret_dict = {k: all_ret[k] for k in all_ret if k not in k_extract}
        return ret_list + [ret_dict]

    def render_path(render_poses, hwf, K, chunk, render_kwargs, gt_imgs=None, savedir=None, render_factor=0):
        H, W, focal = hwf
        rgbs = []
        disps = []
        for i, c2w in enumerate(render_poses):
            rgb, disp, acc, _ = render(H, W, K, chunk=chunk, c2w=c2w[:3, :4], **render_kwargs)
            rgbs.append(rgb.cpu().numpy())
            disps.append(disp.cpu().numpy())
        rgbs = np.stack(rgbs, 0)
        disps = np.stack(disps, 0)
        return rgbs, disps

    def create_nerf(args):
        embed_fn, input_ch = get_embedder(args.multires, args.i_embed)
        input_ch_views = 0
        embeddirs_fn = None
        if args.use_viewdirs:
            embeddirs_fn, input_ch_views = get_embedder(args.multires_views, args.i_embed)
        output_ch = 5 if args.N_importance > 0 else 4
        skips = [2]
        model = NeRF(D=args.netdepth, W=args.netwidth, input_ch=input_ch, output_ch=output_ch, skips=skips,
                     input_ch_views=input_ch_views, use_viewdirs=args.use_viewdirs)
        grad_vars = list(model.parameters())
        model_fine = None
        if args.N_importance > 0:
            model_fine = NeRF(D=args.netdepth_fine, W=args.netwidth_fine, input_ch=input_ch, output_ch=output_ch,
                              skips=skips, input_ch_views=input_ch_views, use_viewdirs=args.use_viewdirs)
            grad_vars += list(model_fine.parameters())
        network_query_fn = lambda inputs, viewdirs, network_fn: run_network(
            inputs, viewdirs, network_fn, embed_fn=embed_fn, embeddirs_fn=embeddirs_fn, netchunk=args.netchunk)
        # Create optimizer
        optimizer = torch.optim.Adam(params=grad_vars, lr=args.lrate, betas=(0.9, 0.999))
        start = 0
        render_kwargs_train = {
            'network_query_fn': network_query_fn,
            'perturb': args.perturb,
            'N_importance': args.N_importance,
            'network_fine': model_fine,
            'N_samples': args.N_samples,
            'network_fn': model,
            'use_viewdirs': args.use_viewdirs,
            'white_bkgd': args.white_bkgd,
            'raw_noise_std': args.raw_noise_std,
            'pytest': args.pytest,
        }
        # NDC only good for LLFF-style forward facing data
        if args.dataset_type != 'llff' or args.no_ndc:
            render_kwargs_train['ndc'] = False
            render_kwargs_train['lindisp'] = args.lindisp
        render_kwargs_test = {k: render_kwargs_train[k] for k in render_kwargs_train}
        render_kwargs_test['perturb'] = False
        render_kwargs_test['raw_noise_std'] = 0.
        return render_kwargs_train, render_kwargs_test, start, grad_vars, optimizer

    def raw2outputs(raw, z_vals, rays_d, raw_noise_std=0, white_bkgd=False, pytest=False):
        raw2alpha = lambda raw, dists, act_fn=F.relu: 1. - torch.exp(-act_fn(raw) * dists)
        dists = z_vals[..., 1:] - z_vals[..., :-1]
        dists = torch.cat([dists, torch.Tensor([1e10]).expand(dists[..., :1].shape)], -1)  # [N_rays, N_samples]
        dists = dists * torch.norm(rays_d[..., None, :], dim=-1)
        rgb = torch.sigmoid(raw[..., :3])  # [N_rays, N_samples, 3]
        noise = 0.
        if raw_noise_std > 0.:
            noise = torch.randn(raw[..., 3].shape) * raw_noise_std
            # Overwrite randomly sampled data if pytest
            if pytest:
                np.random.seed(0)
                noise = np.random.rand(*list(raw[..., 3].shape)) * raw_noise_std
                noise = torch.Tensor(noise)
        alpha = raw2alpha(raw[..., 3] + noise, dists)  # [N_rays, N_samples]
        weights = alpha * torch.cumprod(torch.cat([torch.ones((alpha.shape[0], 1)), 1. - alpha + 1e-10], -1), -1)[:, :-1]
        rgb_map = torch.sum(weights[..., None] * rgb, -2)  # [N_rays, 3]
        depth_map = torch.sum(weights * z_vals, -1)
        disp_map = 1. / torch.max(1e-10 * torch.ones_like(depth_map), depth_map / torch.sum(weights, -1))
        acc_map = torch.sum(weights, -1)
        if white_bkgd:
            rgb_map = rgb_map + (1. - acc_map[..., None])
        return rgb_map, disp_map, acc_map, weights, depth_map

    def render_rays(ray_batch, network_fn, network_query_fn, N_samples, retraw=False, lindisp=False, perturb=0.,
                    N_importance=0, network_fine=None, white_bkgd=False, raw_noise_std=0., verbose=False,
                    pytest=False):
        N_rays = ray_batch.shape[0]
        rays_o, rays_d = ray_batch[:, 0:3], ray_batch[:, 3:6]  # [N_rays, 3] each
        viewdirs = ray_batch[:, -3:] if ray_batch.shape[-1] > 8 else None
        bounds = torch.reshape(ray_batch[..., 6:8], [-1, 1, 2])
        near, far = bounds[..., 0], bounds[..., 1]  # [-1,1]
        t_vals = torch.linspace(0., 1., steps=N_samples)
        if not lindisp:
            z_vals = near * (1. - t_vals) + far * (t_vals)
        else:
            z_vals = 1. / (1. / near * (1. - t_vals) + 1. / far * (t_vals))
        z_vals = z_vals.expand([N_rays, N_samples])
        if perturb > 0.:
            # get intervals between samples
            mids = .5 * (z_vals[..., 1:] + z_vals[..., :-1])
            upper = torch.cat([mids, z_vals[..., -1:]], -1)
            lower = torch.cat([z_vals[..., :1], mids], -1)
            # stratified samples in those intervals
            t_rand = torch.rand(z_vals.shape)
            # Pytest, overwrite u with numpy's fixed random numbers
            if pytest:
                np.random.seed(0)
                t_rand = np.random.rand(*list(z_vals.shape))
                t_rand = torch.Tensor(t_rand)
            z_vals = lower + (upper - lower) * t_rand
        pts = rays_o[..., None, :] + rays_d[..., None, :] * z_vals[..., :, None]  # [N_rays, N_samples, 3]
        raw = network_query_fn(pts, viewdirs, network_fn)
        rgb_map, disp_map, acc_map, weights, depth_map = raw2outputs(raw, z_vals, rays_d, raw_noise_std, white_bkgd,
                                                                     pytest=pytest)
        if N_importance > 0:
            rgb_map_0, disp_map_0, acc_map_0 = rgb_map, disp_map, acc_map
            z_vals_mid = .5 * (z_vals[..., 1:] + z_vals[..., :-1])
            z_samples = sample_pdf(z_vals_mid, weights[..., 1:-1], N_importance, det=(perturb == 0.), pytest=pytest)
            z_samples = z_samples.detach()
            z_vals, _ = torch.sort(torch.cat([z_vals, z_samples], -1), -1)
            pts = rays_o[..., None, :] + rays_d[..., None, :] * z_vals[..., :, None]  # [N_rays, N_samples + N_importance, 3]
            run_fn = network_fn if network_fine is None else network_fine
            raw = network_query_fn(pts, viewdirs, run_fn)
            rgb_map, disp_map, acc_map, weights, depth_map = raw2outputs(raw, z_vals, rays_d, raw_noise_std,
                                                                         white_bkgd, pytest=pytest)
        ret = {'rgb_map': rgb_map, 'disp_map': disp_map, 'acc_map': acc_map}
        if retraw:
            ret['raw'] = raw
        if N_importance > 0:
            ret['rgb0'] = rgb_map_0
            ret['disp0'] = disp_map_0
            ret['acc0'] = acc_map_0
            ret['z_std'] = torch.std(z_samples, dim=-1, unbiased=False)  # [N_rays]
        for k in ret:
            if torch.isnan(ret[k]).any() or torch.isinf(ret[k]).any():
                print(f"! [Numerical Error] {k} contains nan or inf.")
        return ret

    # ---- train(): a small blender-like scene, the args of configs/lego.txt scaled down ----
    class Args:
        multires, multires_views, i_embed, use_viewdirs = 4, 2, 0, True
        N_importance, N_samples, netdepth, netwidth, netdepth_fine, netwidth_fine = 8, 8, 4, 32, 4, 32
        netchunk, chunk, lrate, lrate_decay, perturb, white_bkgd, raw_noise_std = 64, 24, 5e-3, 1, 1., True, 0.
        dataset_type, no_ndc, lindisp, N_rand, precrop_iters, precrop_frac = 'blender', False, False, 32, 2, .5
        pytest = pytest_draws

    args = Args()
    if ndc:
        args.dataset_type, args.white_bkgd = 'llff', False
    rng = np.random.default_rng(3)
    H, W, focal = 8, 8, 9.0
    n_views = 3
    poses = []
    for k in range(n_views):
        th = 0.2 * k if ndc else 2 * np.pi * k / n_views  # LLFF's views face forward
        cam = np.array([4 * np.sin(th), 0.5, 4 * np.cos(th)])
        fwd = cam / np.linalg.norm(cam)  # the camera looks along -z, towards the origin
        right = np.cross([0, 1, 0], fwd)
        right /= np.linalg.norm(right)
        up = np.cross(fwd, right)
        poses.append(np.concatenate([np.stack([right, up, fwd, cam], 1), [[0, 0, 0, 1]]], 0))
    poses = np.stack(poses).astype(np.float32)
    images = (0.5 + 0.4 * np.sin(np.linspace(0, 3, H * W * 3).reshape(H, W, 3) + rng.uniform(0, 1, (n_views, 1, 1, 1))))
    images = images.astype(np.float32)
    K = np.array([[focal, 0, 0.5 * W], [0, focal, 0.5 * H], [0, 0, 1]])
    hwf = [H, W, focal]
    near, far = (0., 1.) if ndc else (2., 6.)
    i_train = np.arange(n_views)

    render_kwargs_train, render_kwargs_test, start, grad_vars, optimizer = create_nerf(args)
    global_step = start
    bds_dict = {'near': near, 'far': far}
    render_kwargs_train.update(bds_dict)
    render_kwargs_test.update(bds_dict)
    models = {'coarse': render_kwargs_train['network_fn'], 'fine': render_kwargs_train['network_fine']}
    result = {}
    start_from(torch, models, init, result)
    if use_batching:
        rays = np.stack([get_rays_np(H, W, K, p) for p in poses[:, :3, :4]], 0)  # [N, ro+rd, H, W, 3]
        rays_rgb = np.concatenate([rays, images[:, None]], 1)  # [N, ro+rd+rgb, H, W, 3]
        rays_rgb = np.transpose(rays_rgb, [0, 2, 3, 1, 4])  # [N, H, W, ro+rd+rgb, 3]
        rays_rgb = np.stack([rays_rgb[i] for i in i_train], 0)  # train images only
        rays_rgb = np.reshape(rays_rgb, [-1, 3, 3])  # [(N-1)*H*W, ro+rd+rgb, 3]
        rays_rgb = rays_rgb.astype(np.float32)
        np.random.shuffle(rays_rgb)
        i_batch = 0
        images = torch.Tensor(images)
        rays_rgb = torch.Tensor(rays_rgb)
    poses = torch.Tensor(poses)

    N_rand = args.N_rand
    losses, psnrs = [], []
    for i in range(start, iters):
        if use_batching:
            # Random over all images
            batch = rays_rgb[i_batch:i_batch + N_rand]  # [B, 2+1, 3*?]
            batch = torch.transpose(batch, 0, 1)
            batch_rays, target_s = batch[:2], batch[2]
            i_batch += N_rand
            if i_batch >= rays_rgb.shape[0]:
                rand_idx = torch.randperm(rays_rgb.shape[0])
                rays_rgb = rays_rgb[rand_idx]
                i_batch = 0
        else:
            # Random from one image
            img_i = np.random.choice(i_train)
            target = images[img_i]
            target = torch.Tensor(target)
            pose = poses[img_i, :3, :4]
            rays_o, rays_d = get_rays(H, W, K, torch.Tensor(pose))  # (H, W, 3), (H, W, 3)
            if i < args.precrop_iters:
                dH = int(H // 2 * args.precrop_frac)
                dW = int(W // 2 * args.precrop_frac)
                coords = torch.stack(
                    torch.meshgrid(
                        torch.linspace(H // 2 - dH, H // 2 + dH - 1, 2 * dH),
                        torch.linspace(W // 2 - dW, W // 2 + dW - 1, 2 * dW)
                    ), -1)
            else:
                coords = torch.stack(torch.meshgrid(torch.linspace(0, H - 1, H), torch.linspace(0, W - 1, W)), -1)  # (H, W, 2)
            coords = torch.reshape(coords, [-1, 2])  # (H * W, 2)
            select_inds = np.random.choice(coords.shape[0], size=[min(N_rand, coords.shape[0])], replace=False)  # (N_rand,)
            select_coords = coords[select_inds].long()  # (N_rand, 2)
            rays_o = rays_o[select_coords[:, 0], select_coords[:, 1]]  # (N_rand, 3)
            rays_d = rays_d[select_coords[:, 0], select_coords[:, 1]]  # (N_rand, 3)
            batch_rays = torch.stack([rays_o, rays_d], 0)
            target_s = target[select_coords[:, 0], select_coords[:, 1]]  # (N_rand, 3)

        #####  Core optimization loop  #####
        rgb, disp, acc, extras = render(H, W, K, chunk=args.chunk, rays=batch_rays, verbose=i < 10, retraw=True,
                                        **render_kwargs_train)
        optimizer.zero_grad()
        img_loss = img2mse(rgb, target_s)
        trans = extras['raw'][..., -1]
        loss = img_loss
        psnr = mse2psnr(img_loss)
        if 'rgb0' in extras:
            img_loss0 = img2mse(extras['rgb0'], target_s)
            loss = loss + img_loss0
            psnr0 = mse2psnr(img_loss0)
        loss.backward()
        optimizer.step()
        # NOTE: IMPORTANT!
        ###   update learning rate   ###
        decay_rate = 0.1
        decay_steps = args.lrate_decay * 1000
        new_lrate = args.lrate * (decay_rate ** (global_step / decay_steps))
        for param_group in optimizer.param_groups:
            param_group['lr'] = new_lrate
        losses.append(loss.item())
        psnrs.append([psnr.item(), psnr0.item(), float(trans.mean())])
        if i == start:
            result["first_disp"] = numpy_of(disp)
            result["first_z_std"] = numpy_of(extras['z_std'])
        global_step += 1

    result["losses"], result["psnrs"] = losses, psnrs
    result["coarse_grad"] = numpy_of(models['coarse'].pts_linears[0].weight.grad)
    result["fine_grad"] = numpy_of(models['fine'].rgb_linear.weight.grad)
    with torch.no_grad():
        rgbs, disps = render_path(poses[:1], hwf, K, args.chunk, render_kwargs_test)
    result["rgbs"], result["disps"] = rgbs, disps
    result["rgb8"] = to8b(rgbs[-1])
    return result


@pytest.mark.parametrize("use_batching", [False, True])
def test_nerf_training_steps(use_batching):
    ref, got = compare_program(nerf_program, use_batching=use_batching, pytest_draws=True)
    assert np.isfinite(ref["losses"]).all()


def test_nerf_stratified_draws_from_torch_rand():
    """perturb > 0 without the pytest flag: stratified samples and sample_pdf's u from torch.rand."""
    compare_program(nerf_program, iters=3, rtol=1e-3, atol=1e-4)


def test_nerf_ndc_rays():
    compare_program(nerf_program, iters=2, ndc=True, pytest_draws=True)
